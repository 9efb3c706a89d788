import { Global, Module } from '@nestjs/common';
import { AdminGuard } from '../platform/auth/admin.guard';
import { Metrics } from './metrics';
import { MetricsController } from './metrics.controller';

/** Prometheus metrics (prom-client); global so any module can record into them. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [Metrics, AdminGuard],
  exports: [Metrics],
})
export class MetricsModule {}
