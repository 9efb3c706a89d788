import { ADMIN_TOKEN, TestApp } from '../support/app';

/** A browser's cookie jar for Fastify inject: the console's cookies, sent back as a browser would. */
export class ConsoleClient {
  private readonly cookies = new Map<string, string>();

  constructor(
    private readonly t: TestApp,
    readonly ip = '10.0.0.1',
    /** Sent with every request: a proxy's X-Forwarded-* headers. */
    private readonly headers: Record<string, string> = {},
  ) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private remember(setCookie: string | string[] | undefined): void {
    for (const line of [setCookie ?? []].flat()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair.split('=');
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value.join('='));
    }
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  async get(url: string, headers: Record<string, string> = {}) {
    const res = await this.t.app.getHttpAdapter().getInstance().inject({ method: 'GET', url, headers: { ...this.headers, cookie: this.cookieHeader(), ...headers }, remoteAddress: this.ip });
    this.remember(res.headers['set-cookie'] as string | string[] | undefined);
    return { status: res.statusCode, headers: res.headers, text: res.body };
  }

  async post(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    const res = await this.t.app.getHttpAdapter().getInstance().inject({
      method: 'POST',
      url,
      headers: { ...this.headers, cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(form).toString(),
      remoteAddress: this.ip,
    });
    this.remember(res.headers['set-cookie'] as string | string[] | undefined);
    return { status: res.statusCode, headers: res.headers, text: res.body };
  }

  /** The CSRF token of the last page that carried a form. */
  static csrfOf(page: string): string {
    const token = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
    if (!token) throw new Error('no CSRF field on the page');
    return token;
  }

  async signIn(as: 'operator' | 'creator', secret: string, mode: 'test' | 'live' = 'test') {
    const form = await this.get('/console/sign-in');
    const token = /name="_sign_in" value="([^"]+)"/.exec(form.text)![1];
    return this.post('/console/sign-in', { _sign_in: token, as, secret, mode });
  }

  signInAsOperator(mode: 'test' | 'live' = 'test') {
    return this.signIn('operator', ADMIN_TOKEN, mode);
  }
}
