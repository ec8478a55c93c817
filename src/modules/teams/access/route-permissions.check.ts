import { Injectable, OnModuleInit } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { IS_PUBLIC } from '../../../common/auth/public.decorator';
import { REQUIRED_PERMISSION } from '../../../common/auth/require-permission.decorator';

type Controller = abstract new (...args: never[]) => unknown;

/** The routes of `controllers` that are neither @Public() nor declare a permission. */
export function routesWithoutPermission(
  controllers: readonly Controller[],
  scanner = new MetadataScanner(),
): string[] {
  const missing: string[] = [];
  for (const controller of controllers) {
    const prototype = controller.prototype as Record<string, unknown>;
    const declared = (target: object, key: string) =>
      Reflect.getMetadata(key, target) !== undefined;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name] as object;
      if (!declared(handler, PATH_METADATA)) continue;
      const covered = [IS_PUBLIC, REQUIRED_PERMISSION].some(
        (key) => declared(handler, key) || declared(controller, key),
      );
      if (!covered) missing.push(`${controller.name}.${name}`);
    }
  }
  return missing;
}

/** Start-up fails when an authenticated route of this application declares no permission. */
@Injectable()
export class RoutePermissionsCheck implements OnModuleInit {
  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    const controllers = this.discovery
      .getControllers()
      .map((wrapper) => wrapper.metatype as Controller | null)
      .filter((metatype): metatype is Controller => Boolean(metatype));
    const missing = routesWithoutPermission(controllers);
    if (missing.length) {
      throw new Error(`routes without @RequirePermission (or @Public): ${missing.join(', ')}`);
    }
  }
}
