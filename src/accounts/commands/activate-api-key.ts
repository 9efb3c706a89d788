import { Inject } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '../../event-store/event-store';
import { Errors } from '../../platform/errors';
import type { Mode } from '../../platform/mode';
import { Streams } from '../../platform/streams';
import { EventWriter } from '../../projection-runner/event-writer';
import { AccountEvents, ApiKeyActivated, ApiKeyCreated } from '../events';

/** Activates a key whose activation fee was paid. Idempotent: an active key records nothing. */
export class ActivateApiKeyCommand extends Command<void> {
  constructor(readonly mode: Mode, readonly keyId: string, readonly checkoutSessionId: string) {
    super();
  }
}

@CommandHandler(ActivateApiKeyCommand)
export class ActivateApiKeyHandler implements ICommandHandler<ActivateApiKeyCommand> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
  ) {}

  async execute({ mode, keyId, checkoutSessionId }: ActivateApiKeyCommand): Promise<void> {
    const stream = Streams.apiKey(mode, keyId);
    await this.writer.retryOnConflict(async () => {
      const events = await this.store.readStream(stream);
      if (!events.length) throw Errors.notFound('API key');
      const created = events[0].data as ApiKeyCreated;
      if (created.active || events.some((e) => e.type === AccountEvents.ApiKeyActivated)) return;
      const activated: ApiKeyActivated = {
        key_id: keyId,
        account_id: created.account_id,
        mode,
        checkout_session_id: checkoutSessionId,
        activated_at: new Date().toISOString(),
      };
      await this.writer.append(stream, [{ type: AccountEvents.ApiKeyActivated, data: { ...activated } }], events[events.length - 1].revision);
    });
  }
}
