import { Global, Module } from '@nestjs/common';
import { AdminGuard } from '../platform/auth/admin.guard';
import { OPERATOR_AUTHENTICATOR } from '../platform/auth/operator';
import { CreateOperatorHandler } from './commands/create-operator';
import { RevokeOperatorHandler } from './commands/revoke-operator';
import { OperatorAuth } from './operator-auth';
import { OperatorQueries } from './operator-queries';
import { OperatorStreams } from './operator-streams';
import { OperatorsController } from './operators.controller';

/**
 * Named operators (issue 38): global, because every module's AdminGuard checks tokens with
 * its OPERATOR_AUTHENTICATOR.
 */
@Global()
@Module({
  controllers: [OperatorsController],
  providers: [
    OperatorQueries,
    OperatorStreams,
    OperatorAuth,
    CreateOperatorHandler,
    RevokeOperatorHandler,
    AdminGuard,
    { provide: OPERATOR_AUTHENTICATOR, useFactory: (auth: OperatorAuth) => (header: string | undefined) => auth.authenticate(header), inject: [OperatorAuth] },
  ],
  exports: [OperatorAuth, OPERATOR_AUTHENTICATOR],
})
export class OperatorsModule {}
