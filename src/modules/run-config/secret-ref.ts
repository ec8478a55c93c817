import type { SecretRef } from './run-config.types';

/** A secret reference as stored: its name, and the hosts it is bound to when it is bound. */
export function secretRef({ name, inject_hosts }: SecretRef): SecretRef {
  return inject_hosts ? { name, inject_hosts: [...inject_hosts] } : { name };
}
