import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { X509Certificate } from 'node:crypto';
import { ExecutionCa } from './execution-ca';

describe('ExecutionCa', () => {
  it('issues leaves for names and addresses, signed by a CA certificate that expires', async () => {
    const ca = await ExecutionCa.create({ validityMs: 60 * 60 * 1000 });
    const root = new X509Certificate(ca.certPem);
    expect(root.ca).toBe(true);
    expect(new Date(root.validTo).getTime()).toBeLessThan(Date.now() + 2 * 60 * 60 * 1000);
    const named = new X509Certificate((await ca.leafFor('api.example.com')).certPem);
    expect(named.subjectAltName).toBe('DNS:api.example.com');
    expect(named.checkIssued(root)).toBe(true);
    expect(named.verify(root.publicKey)).toBe(true);
    expect(named.ca).toBe(false);
    const address = new X509Certificate((await ca.leafFor('10.0.0.1')).certPem);
    expect(address.subjectAltName).toBe('IP Address:10.0.0.1');
    expect(new x509.X509Certificate(ca.certPem).publicKey.algorithm).toMatchObject({
      name: 'ECDSA',
      namedCurve: 'P-256',
    });
  });

  it('issues one leaf per host, and none once closed', async () => {
    const ca = await ExecutionCa.create();
    const [a, b] = await Promise.all([ca.leafFor('a.example'), ca.leafFor('a.example')]);
    expect(a).toBe(b);
    expect(await ca.leafFor('a.example')).toBe(a);
    ca.close();
    await expect(ca.leafFor('a.example')).rejects.toThrow('the execution CA is closed');
  });

  it('makes a different CA per execution', async () => {
    const [one, two] = await Promise.all([ExecutionCa.create(), ExecutionCa.create()]);
    expect(one.certPem).not.toBe(two.certPem);
  });
});
