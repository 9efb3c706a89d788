import { Controller, Get, Query } from '@nestjs/common';
import { Auth, AuthContext } from '../platform/auth/auth-context';
import { parseClampedInteger } from '../platform/pagination';
import { ProjectionRunner } from '../projection-runner/projection-runner';
import { inferenceUsageProjection } from '../../projections/inference-usage.projection';
import { UsageMeter } from './usage-meter';
import { UsageQueries } from './usage-queries';

/** `days` of GET /v1/usage and `svc usage`: default 30, clamped to 1-365 (decisions section 8). */
export const parseDays = (raw: unknown) => parseClampedInteger('days', raw, { fallback: 30, max: 365 });

@Controller('v1')
export class UsageController {
  constructor(
    private readonly usage: UsageQueries,
    private readonly meter: UsageMeter,
    private readonly projections: ProjectionRunner,
  ) {}

  /** GET /v1/usage: the caller's account, in the key's mode only. Any valid key. */
  @Get('usage')
  async get(@Auth() auth: AuthContext, @Query('days') days?: unknown) {
    const window = parseDays(days);
    // The caller's own calls through this instance are in the answer (bounded wait, as writes do).
    const latest = this.meter.latestPosition(auth.mode, auth.accountId);
    if (latest) await this.projections.waitFor(latest, { projections: [inferenceUsageProjection.name] });
    return this.usage.report(auth.accountId, auth.mode, window);
  }
}
