import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' } as const;
/** Clocks inside a sandbox may lag the host's a little. */
const BACKDATE_MS = 60 * 60 * 1000;
/** Longer than any execution; the CA dies with the execution's proxy long before. */
export const DEFAULT_CA_VALIDITY_MS = 7 * 24 * 60 * 60 * 1000;

interface Leaf {
  certPem: string;
  context: SecureContext;
}

/**
 * A certificate authority made for one execution: an ECDSA P-256 key that signs leaf
 * certificates for the hosts the proxy intercepts, made on first use and cached. Only the CA
 * certificate (`certPem`) leaves this object; the private keys live in memory and are dropped
 * by `close()`.
 */
export class ExecutionCa {
  private readonly leaves = new Map<string, Promise<Leaf>>();
  private closed = false;

  private constructor(
    readonly certPem: string,
    private caKeys: CryptoKeyPair | null,
    private leafKeys: { pair: CryptoKeyPair; pem: string } | null,
    private readonly caName: string,
    private readonly notAfter: Date,
  ) {}

  static async create(options: { label?: string; validityMs?: number } = {}): Promise<ExecutionCa> {
    const now = Date.now();
    const notAfter = new Date(now + (options.validityMs ?? DEFAULT_CA_VALIDITY_MS));
    const caKeys = await generateKeys(false);
    const name = `CN=Ambient egress ${options.label ?? 'execution'} CA ${randomBytes(4).toString('hex')}, O=Ambient`;
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serialNumber(),
      name,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter,
      keys: caKeys,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    });
    // One key for every leaf of the execution: a P-256 key per host would buy nothing, as all
    // of them live in this one process.
    const leafPair = await generateKeys(true);
    const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', leafPair.privateKey);
    const leafPem = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' })
      .export({ format: 'pem', type: 'pkcs8' })
      .toString();
    return new ExecutionCa(
      cert.toString('pem'),
      caKeys,
      { pair: leafPair, pem: leafPem },
      name,
      notAfter,
    );
  }

  /** The certificate and TLS context to present as `host` (a name or an IP address). */
  leafFor(host: string): Promise<{ certPem: string; context: SecureContext }> {
    if (this.closed) return Promise.reject(new Error('the execution CA is closed'));
    let leaf = this.leaves.get(host);
    if (!leaf) {
      leaf = this.issue(host);
      leaf.catch(() => this.leaves.delete(host));
      this.leaves.set(host, leaf);
    }
    return leaf;
  }

  /** Forgets the keys and every leaf; later `leafFor` calls fail. */
  close(): void {
    this.closed = true;
    this.caKeys = null;
    this.leafKeys = null;
    this.leaves.clear();
  }

  private async issue(host: string): Promise<Leaf> {
    const caKeys = this.caKeys;
    const leafKeys = this.leafKeys;
    if (!caKeys || !leafKeys) throw new Error('the execution CA is closed');
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serialNumber(),
      subject: isIP(host) ? `CN=${host}` : `CN=${host.slice(0, 64)}`,
      issuer: this.caName,
      notBefore: new Date(Date.now() - BACKDATE_MS),
      notAfter: this.notAfter,
      publicKey: leafKeys.pair.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([
          { type: isIP(host) ? 'ip' : 'dns', value: host },
        ]),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    });
    const certPem = cert.toString('pem');
    const context = createSecureContext({
      key: leafKeys.pem,
      cert: `${certPem}\n${this.certPem}`,
      minVersion: 'TLSv1.2',
    });
    return { certPem, context };
  }
}

/** The CA's private key is not extractable; the leaves' is, once, for node:tls. */
function generateKeys(extractable: boolean): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(KEY_ALGORITHM, extractable, [
    'sign',
    'verify',
  ]) as Promise<CryptoKeyPair>;
}

/** A positive 16-byte serial (the high bit clear, so DER does not read it as negative). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  return bytes.toString('hex');
}
