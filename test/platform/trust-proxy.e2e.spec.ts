import { startTestApp, TestApp } from '../support/app';
import { ConsoleClient } from '../console/console-client';

const sessionCookie = (res: { headers: Record<string, unknown> }) =>
  [res.headers['set-cookie']].flat().find((c) => String(c).startsWith('console_session=')) as string | undefined;

/**
 * Issue 43: TRUST_PROXY. Behind a TLS proxy the service sees plain http from the proxy's
 * address: only a trusted proxy's X-Forwarded-Proto makes the session cookie Secure, and only
 * its X-Forwarded-For names the client the sign-in limit counts.
 */
describe('TRUST_PROXY: forwarded headers believed from the proxy only', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { TRUST_PROXY: '10.0.0.0/8' } });
  });
  afterAll(() => t?.close());

  const viaProxy = (client: string) => new ConsoleClient(t, '10.1.2.3', { 'x-forwarded-proto': 'https', 'x-forwarded-for': client });

  it('marks the session cookie Secure when the trusted proxy says the request came over https', async () => {
    const signedIn = await viaProxy('198.51.100.7').signInAsOperator();
    expect(signedIn.status).toBe(303);
    expect(sessionCookie(signedIn)).toMatch(/; Secure/i);
  });

  it('ignores the same headers from a peer that is not the proxy', async () => {
    const direct = new ConsoleClient(t, '192.0.2.44', { 'x-forwarded-proto': 'https', 'x-forwarded-for': '198.51.100.8' });
    const signedIn = await direct.signInAsOperator();
    expect(signedIn.status).toBe(303);
    expect(sessionCookie(signedIn)).not.toMatch(/Secure/i);
  });

  it('limits sign-in attempts per forwarded client, not per proxy: one client limited, the next through the same proxy is not', async () => {
    const guesser = viaProxy('203.0.113.9');
    for (let i = 0; i < 10; i++) expect((await guesser.signIn('operator', `guess-${i}`)).status).toBe(401);
    expect((await guesser.signInAsOperator()).status).toBe(429);
    expect((await viaProxy('203.0.113.10').signInAsOperator()).status).toBe(303);
  });

  it('counts an untrusted peer by its own address whatever X-Forwarded-For it sends', async () => {
    const spoofing = (forwardedFor: string) => new ConsoleClient(t, '192.0.2.99', { 'x-forwarded-for': forwardedFor });
    for (let i = 0; i < 10; i++) expect((await spoofing(`198.51.100.${i}`).signIn('operator', `guess-${i}`)).status).toBe(401);
    expect((await spoofing('198.51.100.200').signInAsOperator()).status).toBe(429);
  });
});
