import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { AdminGuard } from '../platform/auth/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { Metrics } from './metrics';

/** GET /metrics: Prometheus text format, behind the operator token (it shows traffic and lag of every account together). */
@Controller('metrics')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
