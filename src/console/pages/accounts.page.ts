import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AccountQueries } from '../../accounts/account-queries';
import { RevokeApiKeyCommand } from '../../accounts/commands/revoke-api-key';
import { GrantCreditsCommand } from '../../factory/commands/grant-credits';
import { LedgerQueries } from '../../ledger/ledger-queries';
import { ConsoleAction, ConsoleInputError, ConsolePage, ConsoleSection } from '../console-page';
import { count, instant } from '../format';
import { Html, html } from '../html';
import { csrfField } from '../layout';
import type { PageRequest } from '../viewer';

const MAX_GRANT = 1_000_000;

/**
 * Accounts and keys (operators): find an account by id or slug, see its keys (never a
 * secret: the read model holds none), revoke one, grant credits in the viewer's mode. The
 * same commands as the operator API.
 */
@Injectable()
export class AccountsSection implements ConsoleSection {
  constructor(
    private readonly accounts: AccountQueries,
    private readonly commands: CommandBus,
    private readonly ledger: LedgerQueries,
  ) {}

  pages(): ConsolePage[] {
    return [{ path: '/console/accounts', title: 'Accounts and keys', role: 'operator', render: (request) => this.render(request) }];
  }

  actions(): ConsoleAction[] {
    return [
      {
        path: '/console/keys/:id/revoke',
        role: 'operator',
        run: async (request, form) => {
          await this.commands.execute(new RevokeApiKeyCommand(request.param!));
          return { redirect: `/console/accounts?q=${encodeURIComponent(form.account ?? '')}`, notice: 'key-revoked' };
        },
      },
      {
        path: '/console/accounts/:id/credits',
        role: 'operator',
        run: async (request, form) => {
          const amount = Number(form.amount);
          if (!Number.isSafeInteger(amount) || amount < 1 || amount > MAX_GRANT) {
            throw new ConsoleInputError(`Credits to grant must be a whole number from 1 to ${count(MAX_GRANT)}.`);
          }
          await this.commands.execute(new GrantCreditsCommand(request.param!, request.viewer.mode, amount));
          return { redirect: `/console/accounts?q=${encodeURIComponent(request.param!)}`, notice: 'credits-granted' };
        },
      },
    ];
  }

  private async render(request: PageRequest): Promise<Html> {
    const q = (request.query.q ?? '').trim();
    const search = html`<form class="filters" method="get" action="/console/accounts">
<div><label for="q">Account id or slug</label><input id="q" name="q" value="${q}" required></div>
<button type="submit">Find</button></form>`;
    if (!q) return search;
    const account = await this.accounts.findAccount(q);
    if (!account) return html`${search}<p class="notice error" role="alert">No account is named ${q}.</p>`;
    const [keys, credits, pause] = await Promise.all([
      this.accounts.listKeys(account.id),
      this.accounts.creditsLeft({ accountId: account.id, mode: request.viewer.mode }),
      this.ledger.pause({ accountId: account.id, mode: request.viewer.mode }),
    ]);
    const mode = request.viewer.mode;
    return html`${search}
<section class="panel" data-account="${account.id}">
<h2>${account.name}</h2>
<p><code>${account.id}</code> · slug <code>${account.slug}</code> · ${account.email} · created ${instant(account.created_at)}</p>
<p>Generation credits in ${mode} mode: <strong data-credits>${count(credits)}</strong></p>
<p data-payouts="${pause ? 'paused' : 'running'}">Payouts in ${mode} mode: ${
      pause
        ? html`<span class="badge bad">paused</span> since ${instant(pause.since)}: <code data-pause-reason>${pause.reason}</code>${pause.failure_code ? html` <span class="muted">(the processor refused the destination; <code>svc payouts destination</code> with a new one lifts the pause)</span>` : html` <span class="muted">(<code>svc payouts resume</code> lifts it)</span>`}`
        : html`<span class="badge good">running</span>`
    }</p>
<form class="filters" method="post" action="/console/accounts/${account.id}/credits">${csrfField(request.viewer)}
<div><label for="amount">Credits to grant (${mode})</label><input id="amount" name="amount" inputmode="numeric" required></div>
<button type="submit">Grant credits</button></form>
</section>
<h2>Keys</h2>
<table class="panel">
<thead><tr><th scope="col">Key</th><th scope="col">Mode</th><th scope="col">Tier</th><th scope="col">Scopes</th><th scope="col">State</th><th scope="col">Created</th><th scope="col"></th></tr></thead>
<tbody>${keys.map(
      (k) => html`<tr data-key="${k.id}"><td><code>${k.id}</code> ${k.name}</td><td><span class="badge ${k.mode}">${k.mode}</span></td><td>${k.tier}</td>
<td>${k.scopes.length ? k.scopes.join(', ') : html`<span class="muted">all</span>`}</td>
<td>${k.revoked_at ? html`<span class="badge bad">revoked ${instant(k.revoked_at)}</span>` : k.active ? html`<span class="badge good">active</span>` : html`<span class="badge muted">awaiting activation</span>`}${k.expires_at ? html` <span class="muted">expires ${instant(k.expires_at)}</span>` : ''}</td>
<td>${instant(k.created_at)}</td>
<td>${k.revoked_at ? '' : html`<form class="inline" method="post" action="/console/keys/${k.id}/revoke" data-confirm="Revoke ${k.id}? It is refused at once and for good.">${csrfField(request.viewer)}<input type="hidden" name="account" value="${account.id}"><button class="danger" type="submit">Revoke</button></form>`}</td></tr>`,
    )}</tbody></table>`;
  }
}
