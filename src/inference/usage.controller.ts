import { Controller, Get, Query } from '@nestjs/common';
import { Auth, AuthContext } from '../platform/auth/auth-context';
import { parseClampedInteger } from '../platform/pagination';
import { UsageQueries } from './usage-queries';

/** `days` of GET /v1/usage and `svc usage`: default 30, clamped to 1-365 (decisions section 8). */
export const parseDays = (raw: unknown) => parseClampedInteger('days', raw, { fallback: 30, max: 365 });

@Controller('v1')
export class UsageController {
  constructor(private readonly usage: UsageQueries) {}

  /** GET /v1/usage: the caller's account, in the key's mode only. Any valid key. */
  @Get('usage')
  async get(@Auth() auth: AuthContext, @Query('days') days?: unknown) {
    return this.usage.report(auth, parseDays(days));
  }
}
