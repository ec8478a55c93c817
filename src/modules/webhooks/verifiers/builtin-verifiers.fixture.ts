import { BUILTIN_VERIFIERS, SignatureVerifier, SignatureVerifierRegistry } from './index';

/** For specs: the built-in verifiers by scheme, and their registry. */
export const BUILTIN_REGISTRY = new SignatureVerifierRegistry(
  BUILTIN_VERIFIERS.map((verifier) => ({ owner: 'ambient', verifier })),
);

export function builtinVerifier(scheme: string): SignatureVerifier {
  const verifier = BUILTIN_REGISTRY.find(scheme);
  if (!verifier) throw new Error(`no built-in scheme ${scheme}`);
  return verifier;
}
