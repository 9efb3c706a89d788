import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpSender } from '../../src/webhooks/http-sender';
import { addressAllowed, checkEndpointUrl, classifyAddress, guardedLookup } from '../../src/webhooks/url-policy';

describe('webhook URL policy (decisions section 6)', () => {
  describe('addresses', () => {
    it.each([
      // Metadata services, also wrapped in IPv6 forms: refused in both modes.
      ['169.254.169.254', 'metadata'],
      ['fe80::1', 'metadata'],
      ['fd00:ec2::254', 'metadata'],
      ['100.100.100.200', 'metadata'],
      ['::ffff:169.254.169.254', 'metadata'],
      ['::a9fe:a9fe', 'metadata'],
      ['::ffff:0:a9fe:a9fe', 'metadata'],
      ['64:ff9b::a9fe:a9fe', 'metadata'],
      ['64:ff9b::169.254.169.254', 'metadata'],
      ['2002:a9fe:a9fe::1', 'metadata'],
      ['2001:0:a9fe:a9fe::1', 'metadata'],
      ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata'],
      // Not public: refused in live mode, allowed in test mode.
      ['127.0.0.1', 'internal'],
      ['::1', 'internal'],
      ['::', 'internal'],
      ['0.0.0.0', 'internal'],
      ['10.1.2.3', 'internal'],
      ['192.168.0.1', 'internal'],
      ['172.16.0.1', 'internal'],
      ['100.64.0.1', 'internal'],
      ['fc00::1', 'internal'],
      ['192.0.2.1', 'internal'],
      ['198.51.100.7', 'internal'],
      ['203.0.113.9', 'internal'],
      ['2001:db8::1', 'internal'],
      ['100::1', 'internal'],
      ['224.0.0.1', 'internal'],
      ['255.255.255.255', 'internal'],
      ['::ffff:0:7f00:1', 'internal'],
      ['::ffff:127.0.0.1', 'internal'],
      ['::7f00:1', 'internal'],
      ['::ffff:8.8.8.8', 'internal'],
      ['64:ff9b::808:808', 'internal'],
      ['2002:808:808::1', 'internal'],
      ['not-an-address', 'internal'],
      // Public.
      ['8.8.8.8', 'public'],
      ['1.1.1.1', 'public'],
      ['2606:4700:4700::1111', 'public'],
    ])('%s is %s', (address, kind) => {
      expect(classifyAddress(address)).toBe(kind);
      expect(addressAllowed('live', address)).toBe(kind === 'public');
      expect(addressAllowed('test', address)).toBe(kind !== 'metadata');
    });
  });

  describe('registration', () => {
    it.each([
      ['https://[::a9fe:a9fe]/'],
      ['https://[2002:a9fe:a9fe::1]/'],
      ['https://[::ffff:0:7f00:1]/'],
      ['https://192.0.2.10/'],
      ['https://198.51.100.10/'],
      ['https://203.0.113.10/'],
      ['https://[2001:db8::10]/'],
      ['https://[100::1]/'],
      ['https://127.0.0.1/'],
      ['https://localhost/'],
      ['http://8.8.8.8/'],
      ['https://:@8.8.8.8/'],
    ])('live mode refuses %s', async (url) => {
      expect(await checkEndpointUrl('live', url)).toEqual({ problem: expect.any(String) });
    });

    it.each([
      ['http://[::a9fe:a9fe]/'],
      ['http://[64:ff9b::a9fe:a9fe]/'],
      ['http://[2002:a9fe:a9fe::1]/'],
      ['http://[::ffff:169.254.169.254]/'],
      ['http://169.254.169.254/latest/meta-data'],
      ['http://:@127.0.0.1/'],
      ['http://user:pw@127.0.0.1/'],
      ['http:\\\\user@127.0.0.1\\'],
      ['ftp://127.0.0.1/'],
      ['not a url'],
    ])('test mode refuses %s', async (url) => {
      expect(await checkEndpointUrl('test', url)).toEqual({ problem: expect.any(String) });
    });

    it.each([
      [' http://127.0.0.1/', 'http://127.0.0.1/'],
      ['http:\\\\127.0.0.1\\', 'http://127.0.0.1/'],
      ['HTTP://LOCALHOST:4000/hooks', 'http://localhost:4000/hooks'],
      ['http://127.1/x', 'http://127.0.0.1/x'],
    ])('test mode stores %j as %j', async (raw, stored) => {
      expect(await checkEndpointUrl('test', raw)).toEqual({ url: stored });
    });

    it('live mode accepts a public https address, normalised', async () => {
      expect(await checkEndpointUrl('live', 'https://8.8.8.8:443/hook')).toEqual({ url: 'https://8.8.8.8/hook' });
    });
  });

  describe('delivery', () => {
    const lookup = (mode: 'test' | 'live', host: string, options: object = {}) =>
      new Promise<{ error?: Error; address?: unknown }>((resolve) =>
        guardedLookup(mode)(host, options, (error: Error | null, address?: unknown) => resolve({ error: error ?? undefined, address })),
      );

    it('guardedLookup refuses a host resolving to loopback in live mode and passes it in test mode', async () => {
      expect((await lookup('live', 'localhost')).error?.message).toMatch(/refused to connect to localhost/);
      const test = await lookup('test', 'localhost', { all: true });
      expect(test.error).toBeUndefined();
      expect(test.address).toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.any(String) })]));
      expect((await lookup('test', 'localhost')).address).toEqual(expect.any(String));
    });

    it('guardedLookup passes a resolution error through', async () => {
      expect((await lookup('test', 'no-such-host.invalid')).error).toBeDefined();
    });

    describe('the sender', () => {
      let server: http.Server;
      let port: number;
      let received = 0;
      const sender = new HttpSender();
      beforeAll(async () => {
        server = http.createServer((req, res) => {
          received++;
          req.resume();
          req.on('end', () => (req.url === '/nul' ? res.writeHead(200).end('a\u0000b') : res.writeHead(204).end()));
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        port = (server.address() as AddressInfo).port;
      });
      afterAll(async () => {
        sender.close();
        await new Promise((resolve) => server.close(resolve));
      });
      const send = (mode: 'test' | 'live', url: string) =>
        sender.send({ url, mode, body: '{}', headers: {}, timeoutMs: 2000, signal: new AbortController().signal });

      it('delivers to a loopback receiver in test mode, by address and by name', async () => {
        expect(await send('test', `http://127.0.0.1:${port}/`)).toEqual(expect.objectContaining({ status: 204 }));
        expect(await send('test', `http://localhost:${port}/`)).toEqual(expect.objectContaining({ status: 204 }));
      });

      it('keeps a response body the database can store (no NUL)', async () => {
        expect(await send('test', `http://127.0.0.1:${port}/nul`)).toEqual(expect.objectContaining({ status: 200, body: 'a\ufffdb' }));
      });

      it.each([
        ['test', () => `http://[::ffff:a9fe:a9fe]:${port}/`],
        ['test', () => `http://169.254.169.254:${port}/`],
        ['live', () => `http://127.0.0.1:${port}/`],
        ['live', () => `https://127.0.0.1:${port}/`],
        ['live', () => `https://localhost:${port}/`],
        ['live', () => `https://[::ffff:7f00:1]:${port}/`],
      ] as const)('in %s mode refuses %s without reaching it', async (mode, url) => {
        const before = received;
        const outcome = await send(mode, url());
        expect(outcome.status).toBeUndefined();
        expect(outcome.error).toMatch(/refused|https/);
        expect(received).toBe(before);
      });
    });
  });
});
