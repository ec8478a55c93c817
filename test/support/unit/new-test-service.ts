import { Provider, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { fake, Fake } from './fake';

export interface TestService<T> {
  /** The service under test, built by Nest's injector like in the app. */
  sut: T;
  /** The fake Nest gave the service for `token` (or the real provider the spec passed). */
  fakeOf<U>(token: Type<U> | string | symbol): Fake<U>;
  module: TestingModule;
}

/**
 * Builds `service` the way immich's newTestService does: every collaborator is a typed fake
 * (see fake.ts) unless `providers` gives a real one (a DataSource on a test database, the
 * config, a real RunTransitions...). Specs assert what the service decides, through the fakes.
 */
export async function newTestService<T>(
  service: Type<T>,
  providers: Provider[] = [],
): Promise<TestService<T>> {
  const module = await Test.createTestingModule({ providers: [service, ...providers] })
    .useMocker(() => fake())
    .compile();
  return {
    sut: module.get(service),
    fakeOf: <U>(token: Type<U> | string | symbol) => module.get<Fake<U>>(token),
    module,
  };
}
