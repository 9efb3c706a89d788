import { Module } from '@nestjs/common';
import { IdempotentRequests } from './idempotent-requests';

/** Idempotency-Key on every POST: its hooks are installed once, by app.ts, after authentication. */
@Module({ providers: [IdempotentRequests], exports: [IdempotentRequests] })
export class IdempotencyModule {}
