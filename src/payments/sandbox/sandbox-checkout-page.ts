import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../../platform/error-filter';
import { ApiError } from '../../platform/errors';
import type { Mode } from '../../platform/mode';
import type { ProcessorDispute } from '../payment-processor';
import { SANDBOX_CARDS, SandboxProcessor } from './sandbox-processor';

/** What the page needs of the commerce context, so this file knows nothing of streams. */
export interface SandboxCheckout {
  /** undefined: no such session. */
  view(sessionId: string): Promise<SessionView | undefined>;
  /** The one fulfilment path; throws ApiError checkout_expired for an expired session. */
  pay(sessionId: string, paymentReference: string): Promise<SessionView>;
  /** The buyer's bank disputes the session's purchase: `open` opens it at the processor, then it is recorded. Not a purchase: nothing. */
  dispute(sessionId: string, open: () => Promise<ProcessorDispute>): Promise<void>;
}

export interface SessionView {
  id: string;
  mode: Mode;
  status: 'requires_payment' | 'complete' | 'expired';
  description: string;
  amount_cents: number;
  currency: string;
  success_url: string | null;
  cancel_url: string | null;
  /** Paid for an asset the buyer already owned, so the payment was refunded at once. */
  refunded: boolean;
}

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const money = (cents: number, currency: string) => `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title></head>
<body><main><h1>${escape(title)}</h1>
${body}
</main></body></html>
`;
}

function paymentForm(s: SessionView, notice = ''): string {
  return page(
    `Pay ${money(s.amount_cents, s.currency)}`,
    `<p>${escape(s.description)}</p>
${notice ? `<p role="alert">${escape(notice)}</p>\n` : ''}<form method="post" action="/checkout/${escape(s.id)}">
<label for="card_number">Card number</label>
<input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" required>
<button type="submit">Pay ${money(s.amount_cents, s.currency)}</button>
</form>
<p>Sandbox: ${SANDBOX_CARDS.pays} pays, ${SANDBOX_CARDS.declines} is declined, ${SANDBOX_CARDS.disputed} pays and is disputed. No real card is charged.</p>
${s.cancel_url ? `<p><a href="${escape(s.cancel_url)}">Cancel</a></p>` : ''}`,
  );
}

const complete = (s: SessionView) =>
  s.refunded
    ? page('Payment refunded', `<p>You already own ${escape(s.description)}, so this payment of ${money(s.amount_cents, s.currency)} was refunded. You can close this page.</p>`)
    : page('Payment complete', `<p>${escape(s.description)}: ${money(s.amount_cents, s.currency)} paid. You can close this page.</p>`);
const expired = () => page('Checkout expired', '<p>This checkout session has expired. Start a new purchase.</p>');

function html(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
}

/**
 * The sandbox's hosted checkout (decisions section 3): plain HTML that works without
 * JavaScript. A plain Fastify plugin, so its form body parser stays in its own context: the
 * JSON API answers 415 to form posts and this page 415 to anything but a form.
 */
export function sandboxCheckoutPage(checkout: SandboxCheckout, processor: SandboxProcessor) {
  return async (fastify: FastifyInstance) => {
    // Only the form a browser posts; anything else is 415.
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });

    // A body that is not a form (wrong type, too large) or a failure: the API's error envelope.
    const logger = new Logger('SandboxCheckout');
    fastify.setErrorHandler((error, request, reply) => sendError(request, reply, error, logger));

    fastify.get('/checkout/:id', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
      const s = await checkout.view(request.params.id);
      if (!s) return html(reply, 404, page('Not found', '<p>There is no such checkout session.</p>'));
      if (s.status === 'complete') return html(reply, 200, complete(s));
      if (s.status === 'expired') return html(reply, 400, expired());
      return html(reply, 200, paymentForm(s));
    });

    fastify.post('/checkout/:id', async (request: FastifyRequest<{ Params: { id: string }; Body: Record<string, string> | undefined }>, reply) => {
      const s = await checkout.view(request.params.id);
      if (!s) return html(reply, 404, page('Not found', '<p>There is no such checkout session.</p>'));
      const card = String(request.body?.card_number ?? '').replace(/[\s-]/g, '');
      if (card === SANDBOX_CARDS.declines) {
        return html(reply, 402, paymentForm(s, 'Your card was declined. Nothing was charged; try another card.'));
      }
      if (card !== SANDBOX_CARDS.pays && card !== SANDBOX_CARDS.disputed) {
        return html(reply, 400, paymentForm(s, `Unknown card number. In the sandbox use ${SANDBOX_CARDS.pays}.`));
      }
      let paid: SessionView;
      try {
        // The processor takes the money first (once per session), then tells the one fulfilment path.
        const payment = await processor.charge({ mode: s.mode, sessionId: s.id, amountCents: s.amount_cents, currency: s.currency });
        paid = await checkout.pay(s.id, payment);
        // As Stripe's test card of that number: the payment succeeds, then the buyer's bank disputes it.
        // Posted again after a crash, both steps find what they did and finish.
        if (card === SANDBOX_CARDS.disputed) await checkout.dispute(s.id, () => processor.openDispute({ mode: s.mode, paymentReference: payment }));
      } catch (error) {
        if (error instanceof ApiError && error.code === 'checkout_expired') return html(reply, 400, expired());
        throw error;
      }
      if (paid.success_url) return reply.code(303).header('location', paid.success_url).send();
      return html(reply, 200, complete(paid));
    });
  };
}
