import { BUILTIN_VERIFIERS, SignatureVerifier, SignatureVerifierRegistry } from './index';

/** For specs: the built-in verifiers by scheme, and their registry. */
export const BUILTIN_REGISTRY = new SignatureVerifierRegistry().registerAll(
  [{ owner: 'ambient', entries: BUILTIN_VERIFIERS }],
  undefined,
);

export function builtinVerifier(scheme: string): SignatureVerifier {
  const verifier = BUILTIN_REGISTRY.get(scheme);
  if (!verifier) throw new Error(`no built-in scheme ${scheme}`);
  return verifier;
}
