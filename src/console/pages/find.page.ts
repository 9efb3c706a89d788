import { Injectable } from '@nestjs/common';
import { AccountQueries } from '../../accounts/account-queries';
import { PurchaseQueries } from '../../commerce/purchase-queries';
import { LedgerQueries } from '../../ledger/ledger-queries';
import { ApiError } from '../../platform/errors';
import { Streams } from '../../platform/streams';
import { DeliveryLog } from '../../webhooks/delivery-log';
import { ConsoleInputError, ConsolePage, ConsoleSection } from '../console-page';
import { Html } from '../html';
import type { PageRequest } from '../viewer';

const notFound = (id: string, mode: string) => new ApiError(404, 'not_found', `Nothing in ${mode} mode has the id ${id}.`);

/**
 * The operator's "open by id" box (in every operator page's bar): an id of an account, key,
 * event, purchase, payout or webhook delivery opens the page that shows it. Objects of the
 * other mode are not found, as everywhere in the console.
 */
@Injectable()
export class FindSection implements ConsoleSection {
  constructor(
    private readonly accounts: AccountQueries,
    private readonly purchases: PurchaseQueries,
    private readonly ledger: LedgerQueries,
    private readonly deliveries: DeliveryLog,
  ) {}

  pages(): ConsolePage[] {
    return [{ path: '/console/find', title: 'Open by id', role: 'operator', redirect: (request) => this.pageOf(request), render: async () => new Html('') }];
  }

  actions() {
    return [];
  }

  private async pageOf(request: PageRequest): Promise<string> {
    const id = (request.query.id ?? '').trim();
    const mode = request.viewer.mode;
    if (!id) throw new ConsoleInputError('Give an id to open: acct_, key_, evt_, pur_, po_ or whd_.');
    const prefix = id.slice(0, id.indexOf('_') + 1);
    switch (prefix) {
      case 'acct_': {
        if (!(await this.accounts.findAccount(id))) throw notFound(id, mode);
        return `/console/accounts?q=${encodeURIComponent(id)}`;
      }
      case 'key_': {
        const key = await this.accounts.findKey(id);
        if (!key || key.mode !== mode) throw notFound(id, mode);
        return `/console/accounts?q=${encodeURIComponent(key.account_id)}`;
      }
      case 'evt_':
        return `/console/events/${encodeURIComponent(id)}`;
      case 'pur_': {
        const purchase = await this.purchases.locate(id);
        if (!purchase || purchase.mode !== mode) throw notFound(id, mode);
        return `/console/streams/${encodeURIComponent(Streams.checkout(mode, purchase.session_id))}`;
      }
      case 'po_': {
        const account = await this.ledger.payoutAccount(mode, id);
        if (!account) throw notFound(id, mode);
        return `/console/streams/${encodeURIComponent(Streams.ledger(mode, account))}`;
      }
      case 'whd_': {
        if (!(await this.deliveries.findInMode(mode, id))) throw notFound(id, mode);
        return `/console/webhooks/deliveries/${encodeURIComponent(id)}`;
      }
      default:
        throw new ConsoleInputError(`"${id}" is not an id the console opens: give one starting acct_, key_, evt_, pur_, po_ or whd_.`);
    }
  }
}
