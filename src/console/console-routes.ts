import fastifyCookie from '@fastify/cookie';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import { authenticateApiKey } from '../accounts/api-key.guard';
import type { AccountQueries } from '../accounts/account-queries';
import type { KeptAccounts } from '../accounts/kept-accounts';
import { AuthContext, keyAllows } from '../platform/auth/auth-context';
import { BOOTSTRAP_OPERATOR, setActor } from '../platform/request-context';
import type { OperatorAuth } from '../operators/operator-auth';
import { consoleRoleFor } from './operator-roles';
import { ApiError } from '../platform/errors';
import { isMode, Mode } from '../platform/mode';
import { IMMUTABLE, servedAsset } from './assets/served-assets';
import { ConsoleAction, ConsoleFile, ConsoleInputError, ConsolePage } from './console-page';
import { Html, html } from './html';
import type { IdempotentRequests, KeptAnswer } from '../idempotency/idempotent-requests';
import { sha256 } from '../idempotency/idempotent-requests';
import { bareLayout, IDEMPOTENCY_FIELD, layout, navFor } from './layout';
import { noticeFor, NoticeCode } from './notices';
import { SignInLimiter } from './sign-in-limiter';
import { ConsoleSession, ConsoleSessions, csrfMatches, SESSION_HOURS } from './sessions';
import type { PageRequest, Viewer } from './viewer';

const SESSION_COOKIE = 'console_session';
const SIGN_IN_COOKIE = 'console_sign_in';

/**
 * The headers of every console answer: a strict Content-Security-Policy (scripts and styles
 * from this origin only, nothing inline, no framing), no sniffing, no referrer, no caching of
 * pages that show money.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export interface ConsoleDeps {
  /** The operator API's token check (named operators and the bootstrap ADMIN_TOKEN). */
  operators: OperatorAuth;
  sessions: ConsoleSessions;
  accounts: AccountQueries;
  /** The API's key check, for signing in with a key. */
  keys: KeptAccounts;
  limiter: SignInLimiter;
  pages: ConsolePage[];
  actions: ConsoleAction[];
  /** Files the pages' scripts fetch (a listing's robot and its meshes). */
  files: ConsoleFile[];
  /** The API's Idempotency-Key store, for the key each rendered form carries. */
  idempotency: IdempotentRequests;
}

/** A request the script made (a fragment refresh): answered with a status, not a page. */
const isScripted = (request: FastifyRequest) => request.headers['x-console-fragment'] === '1' || String(request.headers.accept ?? '').startsWith('application/json');

class ConsoleHttpError extends Error {
  constructor(
    readonly status: 401 | 403 | 404 | 429,
    message: string,
  ) {
    super(message);
  }
}

function sendPage(reply: FastifyReply, status: number, page: Html): FastifyReply {
  return reply.status(status).type('text/html; charset=utf-8').send(page.text);
}

function errorPage(status: number, message: string): Html {
  const titles: Record<number, string> = { 400: 'Not done', 409: 'Still running', 401: 'Sign in', 403: 'Not yours to see', 404: 'Not found', 429: 'Too many attempts', 500: 'Something went wrong' };
  return bareLayout(titles[status] ?? 'Error', html`<p class="notice error" role="alert">${message}</p><p><a href="/console">Back to the console</a></p>`);
}

/** Matches a pattern with at most one ":id" segment ("/console/keys/:id/revoke") against a path; answers the id ('' for none), or undefined. */
function matchPath(pattern: string, actual: string): string | undefined {
  const want = pattern.split('/');
  const got = actual.split('/');
  if (want.length !== got.length) return undefined;
  let id = '';
  for (let i = 0; i < want.length; i++) {
    if (want[i] === ':id' && got[i]) id = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return undefined;
  }
  return id;
}

/**
 * /console: server-rendered pages for operators (signed in with the admin token) and creators
 * (signed in with an API key, exchanged for a session and never kept in the browser). The
 * pages read the same query providers and run the same commands as the API.
 */
export function consoleRoutes(deps: ConsoleDeps) {
  const logger = new Logger('Console');

  return async (scope: FastifyInstance) => {
    await scope.register(fastifyCookie);
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    scope.addHook('onSend', async (_request, reply, payload) => {
      // An asset keeps its own caching (immutable under a hashed name); everything else: no-store.
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) if (!(name === 'cache-control' && reply.hasHeader(name))) reply.header(name, value);
      return payload;
    });
    scope.setErrorHandler((error, request, reply) => {
      if (error instanceof ConsoleHttpError) {
        if (error.status === 401 && !isScripted(request) && request.method === 'GET') return reply.redirect('/console/sign-in?notice=session-ended', 303);
        return isScripted(request)
          ? reply.status(error.status).send({ error: { message: error.message } })
          : sendPage(reply, error.status, errorPage(error.status, error.message));
      }
      if (error instanceof ConsoleInputError) return sendPage(reply, 400, errorPage(400, error.message));
      if (error instanceof ApiError && error.status < 500) return sendPage(reply, error.status, errorPage(error.status, error.message));
      const status = (error as { statusCode?: number }).statusCode;
      if (status && status < 500) return sendPage(reply, status, errorPage(status, 'The request could not be read.'));
      logger.error(`${request.method} ${request.url}: ${error instanceof Error ? error.stack : String(error)}`);
      return sendPage(reply, 500, errorPage(500, 'The console could not answer; it has been logged.'));
    });

    const secure = (request: FastifyRequest) => request.protocol === 'https';
    const cookieOptions = (request: FastifyRequest, maxAgeSeconds: number) =>
      ({ path: '/console', httpOnly: true, sameSite: 'strict', secure: secure(request), maxAge: maxAgeSeconds }) as const;

    /** The signed-in viewer; a creator's key is read again on every request, so a revocation ends the session at once. */
    async function viewerOf(request: FastifyRequest): Promise<{ viewer: Viewer; session: ConsoleSession }> {
      const token = request.cookies[SESSION_COOKIE];
      const session = await deps.sessions.find(token);
      if (!session) throw new ConsoleHttpError(401, 'Sign in to use the console.');
      if (session.role === 'operator') {
        // Read again on every request, like a creator's key: a revoked operator's session ends at once.
        const operator = await deps.operators.stillActive(session.operator ?? BOOTSTRAP_OPERATOR, session.openedAt);
        if (!operator) {
          await deps.sessions.close(token);
          throw new ConsoleHttpError(401, 'The operator token this session stood on was revoked or replaced; sign in again.');
        }
        return { session, viewer: { role: 'operator', mode: session.mode, csrfToken: session.csrfToken, operator } };
      }
      const key = session.keyId ? await deps.accounts.findKey(session.keyId) : undefined;
      if (!key || key.revoked_at || (key.expires_at && new Date(key.expires_at).getTime() <= Date.now())) {
        await deps.sessions.close(token);
        throw new ConsoleHttpError(401, 'The key this session stood on was revoked or expired; sign in again.');
      }
      const auth: AuthContext = { accountId: key.account_id, keyId: key.id, mode: key.mode, tier: key.tier, scopes: key.scopes, active: key.active, expiresAt: key.expires_at };
      return { session, viewer: { role: 'creator', mode: key.mode, csrfToken: session.csrfToken, auth } };
    }

    /** Why the viewer may not open a page, or undefined when they may. */
    function refusal(viewer: Viewer, target: { path: string; role: string; scopes?: string[] }): string | undefined {
      if (viewer.role !== target.role) {
        return viewer.role === 'creator' ? 'This page is for operators; sign in with the admin token to see it.' : 'This page is a creator’s; sign in with their API key to see it.';
      }
      const needed = consoleRoleFor(target.path);
      if (viewer.operator && needed !== 'any' && viewer.operator.role !== 'admin' && viewer.operator.role !== needed) {
        return `This needs the operator role ${needed}${needed === 'admin' ? '' : ' or admin'}; ${viewer.operator.name} has the role ${viewer.operator.role}.`;
      }
      if (viewer.auth && !keyAllows(viewer.auth, target.scopes)) {
        return `Your key does not carry the scope this page needs (one of: ${target.scopes!.join(', ')}).`;
      }
      return undefined;
    }

    /** The sections of the bar the viewer can open (a key's scopes and an operator's role hide the others). */
    function sectionsFor(viewer: Viewer) {
      return navFor(viewer).filter((item) => deps.pages.some((page) => page.path === item.path && !refusal(viewer, page)));
    }

    scope.get('/console/assets/:name', async (request, reply) => {
      const asset = servedAsset((request.params as { name: string }).name);
      if (!asset) throw new ConsoleHttpError(404, 'No such file.');
      return reply.type(asset.type).header('cache-control', IMMUTABLE).send(asset.body);
    });

    scope.get('/console', async (request, reply) => {
      const session = await deps.sessions.find(request.cookies[SESSION_COOKIE]);
      if (!session) return reply.redirect('/console/sign-in', 303);
      // The first section this viewer can open: a key without payouts:read lands on another page, not on a 403.
      // There is always one: usage needs no scope, the overview no operator role.
      const { viewer } = await viewerOf(request);
      return reply.redirect(sectionsFor(viewer)[0].path, 303);
    });

    scope.get('/console/sign-in', async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      return signInPage(request, reply, 200, undefined, query.notice);
    });

    function signInPage(request: FastifyRequest, reply: FastifyReply, status: number, error?: string, notice?: string) {
      // Login CSRF: the form carries a token that must match a SameSite=Strict cookie set with it.
      const formToken = randomBytes(18).toString('base64url');
      reply.setCookie(SIGN_IN_COOKIE, formToken, cookieOptions(request, 3600));
      const mode = (request.query as { mode?: string } | undefined)?.mode;
      return sendPage(
        reply,
        status,
        bareLayout(
          'Sign in to the console',
          html`${error ? html`<p class="notice error" role="alert">${error}</p>` : ''}${noticeFor(notice)}
<form method="post" action="/console/sign-in">
  <h2>Creators</h2>
  <input type="hidden" name="_sign_in" value="${formToken}"><input type="hidden" name="as" value="creator">
  <label for="api_key">API key${isMode(mode) ? html` (${mode} mode)` : ''}</label>
  <input id="api_key" name="secret" type="password" autocomplete="off" placeholder="svc_test_..." required>
  <p class="muted">The key is exchanged for a session here and not kept in your browser.</p>
  <button type="submit">Sign in with an API key</button>
</form>
<form method="post" action="/console/sign-in">
  <h2>Operators and finance</h2>
  <input type="hidden" name="_sign_in" value="${formToken}"><input type="hidden" name="as" value="operator">
  <label for="admin_token">Operator token</label>
  <input id="admin_token" name="secret" type="password" autocomplete="off" placeholder="op_... or the ADMIN_TOKEN" required>
  <label for="mode">Mode</label>
  <select id="mode" name="mode"><option value="test"${mode === 'live' ? '' : html` selected`}>test</option><option value="live"${mode === 'live' ? html` selected` : ''}>live</option></select>
  <button type="submit">Sign in with the admin token</button>
</form>`,
        ),
      );
    }

    scope.post('/console/sign-in', async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, string>;
      if (!deps.limiter.allow(request.ip)) {
        throw new ConsoleHttpError(429, `Too many sign-in attempts from your address; wait a minute and try again.`);
      }
      const expected = request.cookies[SIGN_IN_COOKIE];
      if (!expected || form._sign_in !== expected) return signInPage(request, reply, 400, 'The sign-in form expired; try again.');
      const secret = (form.secret ?? '').trim();
      let opened: { token: string };
      try {
        if (form.as === 'operator') {
          if (!secret) throw new ApiError(401, 'missing_credentials', 'No token was given.');
          const operator = await deps.operators.ofToken(secret);
          opened = await deps.sessions.open('operator', isMode(form.mode) ? form.mode : 'test', null, operator.name);
        } else {
          const key = await authenticateApiKey(`Bearer ${secret}`, deps.keys);
          opened = await deps.sessions.open('creator', key.mode, key.keyId);
        }
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 401) throw error;
        const what = form.as === 'operator' ? (error.message.includes('revoked') ? error.message : 'That admin token is not valid.') : `That API key was not accepted: ${error.message}`;
        return signInPage(request, reply, 401, what);
      }
      reply.clearCookie(SIGN_IN_COOKIE, { path: '/console' });
      reply.setCookie(SESSION_COOKIE, opened.token, cookieOptions(request, SESSION_HOURS * 3600));
      return reply.redirect('/console', 303);
    });

    scope.post('/console/sign-out', async (request, reply) => {
      const { session } = await viewerOf(request);
      if (!csrfMatches(session, (request.body as Record<string, string> | undefined)?._csrf)) throw new ConsoleHttpError(403, 'The form was not this session’s (missing or wrong CSRF token).');
      await deps.sessions.close(request.cookies[SESSION_COOKIE]);
      reply.clearCookie(SESSION_COOKIE, { path: '/console' });
      return reply.redirect('/console/sign-in?notice=signed-out', 303);
    });

    scope.post('/console/mode', async (request, reply) => {
      const { viewer, session } = await viewerOf(request);
      const form = (request.body ?? {}) as Record<string, string>;
      if (!csrfMatches(session, form._csrf)) throw new ConsoleHttpError(403, 'The form was not this session’s (missing or wrong CSRF token).');
      if (viewer.role !== 'operator') throw new ConsoleHttpError(403, 'A key belongs to one mode; sign in with a key of the other mode.');
      if (!isMode(form.mode)) throw new ApiError(400, 'validation_failed', 'Choose test or live.');
      await deps.sessions.setMode(request.cookies[SESSION_COOKIE]!, form.mode as Mode);
      return reply.redirect('/console/overview?notice=mode-switched', 303);
    });

    scope.get('/console/*', async (request, reply) => {
      const url = request.url.split('?')[0];
      const found = deps.pages.flatMap((page) => {
        const param = matchPath(page.path, url);
        return param === undefined ? [] : [{ page, param }];
      })[0];
      if (!found) return serveFile(request, reply, url);
      const { viewer } = await viewerOf(request);
      const refused = refusal(viewer, found.page);
      if (refused) {
        // The bar and sign-out stay; "back" leads to a section this viewer can open.
        if (isScripted(request)) throw new ConsoleHttpError(403, refused);
        return sendPage(reply, 403, layout(viewer, url, 'Not yours to see', sectionsFor(viewer), html`<p class="notice error" role="alert">${refused}</p><p><a href="/console">Back to the console</a></p>`));
      }
      const pageRequest: PageRequest = { viewer, query: request.query as Record<string, string | undefined>, param: found.param || undefined };
      if (found.page.redirect) return reply.redirect(await found.page.redirect(pageRequest), 303);
      if (request.headers['x-console-fragment'] === '1' && found.page.fragment) return sendPage(reply, 200, await found.page.fragment(pageRequest));
      if (pageRequest.query.format === 'csv' && found.page.csv) {
        const file = await found.page.csv(pageRequest);
        return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${file.fileName}"`).send(file.body);
      }
      let body: Html;
      try {
        body = await found.page.render(pageRequest);
      } catch (error) {
        if (!(error instanceof ConsoleInputError || (error instanceof ApiError && error.status === 400))) throw error;
        body = html`<p class="notice error" role="alert">${error.message}</p>`;
      }
      return sendPage(reply, 200, layout(viewer, found.page.path, found.page.title, sectionsFor(viewer), html`${noticeFor(pageRequest.query.notice, pageRequest.query.count)}${body}`));
    });

    /** A file a page's script fetches, under the same session and the same checks as a page. */
    async function serveFile(request: FastifyRequest, reply: FastifyReply, url: string) {
      const found = deps.files.flatMap((file) => {
        const param = matchPath(file.path, url);
        return param === undefined ? [] : [{ file, param }];
      })[0];
      if (!found) throw new ConsoleHttpError(404, 'There is no such console page.');
      const { viewer } = await viewerOf(request);
      const refused = refusal(viewer, found.file);
      if (refused) throw new ConsoleHttpError(403, refused);
      const served = await found.file.serve({ viewer, query: request.query as Record<string, string | undefined>, param: found.param || undefined });
      const ascii = served.fileName.replace(/[^A-Za-z0-9._-]/g, '_');
      return reply
        .type('application/octet-stream')
        .header('content-disposition', `attachment; filename="${ascii}"`)
        .send(Buffer.from(served.body.buffer, served.body.byteOffset, served.body.byteLength));
    }

    scope.post('/console/*', async (request, reply) => {
      const url = request.url.split('?')[0];
      const found = deps.actions.flatMap((action) => {
        const param = matchPath(action.path, url);
        return param === undefined ? [] : [{ action, param }];
      })[0];
      if (!found) throw new ConsoleHttpError(404, 'There is no such console action.');
      const { viewer, session } = await viewerOf(request);
      const form = (request.body ?? {}) as Record<string, string>;
      if (!csrfMatches(session, form._csrf)) throw new ConsoleHttpError(403, 'The form was not this session’s (missing or wrong CSRF token).');
      const refused = refusal(viewer, found.action);
      if (refused) throw new ConsoleHttpError(403, refused);
      // What the action appends is recorded as this operator's, or this creator's key's.
      setActor(viewer.operator ? { type: 'operator', id: viewer.operator.name } : { type: 'api_key', id: viewer.auth!.keyId });
      const key = form[IDEMPOTENCY_FIELD];
      if (key !== undefined) {
        const kept = await takeFormKey(request, reply, key, form);
        if (kept) return replay(reply, kept);
      }
      const done = await found.action.run({ viewer, query: {}, param: found.param || undefined }, form);
      // The target is also the body: a kept answer keeps its body, not its Location header.
      const target = withNotice(done.redirect, done.notice, done.count);
      return reply.code(303).header('location', target).type('text/plain; charset=utf-8').send(target);
    });

    /**
     * A form render's key, taken in the API's store (scoped to this session) or answered from it:
     * the first POST runs and its answer (the redirect, or the error page) is kept by the
     * store's onSend hook; a second POST of the same render gets that answer again.
     */
    async function takeFormKey(request: FastifyRequest, reply: FastifyReply, key: string, form: Record<string, string>): Promise<KeptAnswer | undefined> {
      // The same form means the same fields, whatever order the browser sent them in.
      const fields = sha256(new URLSearchParams(Object.entries(form).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))).toString());
      try {
        return await deps.idempotency.begin(request, reply, `console:${sha256(request.cookies[SESSION_COOKIE] ?? '')}`, key, fields);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.code === 'idempotency_key_reused') {
          throw new ApiError(400, error.code, 'This form was already sent with other values, and that first submission stands; nothing was changed now. Reload the page to make another change.');
        }
        if (error.code === 'idempotency_key_in_use') {
          throw new ApiError(409, error.code, 'This form is still being handled (was it sent twice?); wait a moment, then reload the page to see its result.');
        }
        throw error;
      }
    }

    function replay(reply: FastifyReply, kept: KeptAnswer): FastifyReply {
      reply.code(kept.status).header('idempotent-replayed', 'true');
      if (kept.status === 303) reply.header('location', kept.body);
      if (kept.contentType) reply.header('content-type', kept.contentType);
      return reply.send(kept.body);
    }
  };
}

function withNotice(target: string, notice: NoticeCode | undefined, count: number | undefined): string {
  if (!notice) return target;
  return `${target}${target.includes('?') ? '&' : '?'}notice=${notice}${count === undefined ? '' : `&count=${count}`}`;
}
