import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { ApiError } from '../platform/errors';
import { Readiness } from './readiness';

/** Probes for load balancers and Kubernetes; no credentials, nothing secret in them. */
@Controller()
@WithoutApiKey()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly readiness: Readiness,
  ) {}

  /** Liveness: the process answers. Touches nothing else, so a slow database never gets it restarted. */
  @Get('healthz')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Readiness: database and migrations, event store, object storage, read models serving; 503 naming what fails. */
  @Get('readyz')
  @HealthCheck()
  async ready() {
    try {
      return await this.health.check([
        () => this.readiness.database(),
        () => this.readiness.eventStore(),
        () => this.readiness.storage(),
        () => this.readiness.projectionsServing(),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      const result = error.getResponse() as { error?: Record<string, { message?: string }> };
      const failing = Object.entries(result.error ?? {}).map(([name, r]) => `${name}: ${r.message ?? 'down'}`);
      throw new ApiError(503, 'not_ready', `Not ready: ${failing.join('; ')}.`, { checks: result });
    }
  }
}
