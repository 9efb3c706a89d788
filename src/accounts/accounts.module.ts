import { Module } from '@nestjs/common';
import { AccountQueries } from './account-queries';
import { AccountStreams } from './account-streams';
import { ActivateApiKeyHandler } from './commands/activate-api-key';
import { CreateAccountHandler } from './commands/create-account';
import { CreateApiKeyHandler } from './commands/create-api-key';
import { RevokeApiKeyHandler } from './commands/revoke-api-key';
import { OpenKeyActivationHandler } from './commands/open-key-activation';
import { KeptAccounts } from './kept-accounts';
import { MeController } from './me.controller';

@Module({
  controllers: [MeController],
  providers: [AccountQueries, KeptAccounts, AccountStreams, CreateAccountHandler, CreateApiKeyHandler, RevokeApiKeyHandler, OpenKeyActivationHandler, ActivateApiKeyHandler],
  exports: [AccountQueries, KeptAccounts, AccountStreams],
})
export class AccountsModule {}
