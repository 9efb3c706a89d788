import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { Readiness } from './readiness';

/** GET /healthz and GET /readyz (@nestjs/terminus). */
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [Readiness],
  // The console's overview shows the same checks.
  exports: [Readiness],
})
export class HealthModule {}
