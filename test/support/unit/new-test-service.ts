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
  // One fake per token: Nest may ask for a missing token once per injecting provider while it
  // resolves them concurrently, and the spec's fakeOf must see the fake every one of them got.
  const fakes = new Map<unknown, unknown>();
  const module = await Test.createTestingModule({ providers: [service, ...providers] })
    .useMocker((token) => {
      if (!fakes.has(token)) fakes.set(token, fake());
      return fakes.get(token);
    })
    .compile();
  return {
    sut: module.get(service),
    fakeOf: <U>(token: Type<U> | string | symbol) => module.get<Fake<U>>(token),
    module,
  };
}
