import { applyDecorators, CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, UseInterceptors } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Observable } from 'rxjs';
import { SETTINGS, Settings } from '../config/settings';

/**
 * Lifts HTTP_IDLE_TIMEOUT_MS from the response's socket until the response is sent: for work
 * that is silent on the wire for longer (a generation thinking, a publish hashing and copying
 * a file of many GiB), bounded by its own limits instead. An injected request has no socket.
 */
export function outlastIdleTimeout(res: ServerResponse, idleTimeoutMs: number): void {
  const socket = res.socket;
  if (typeof socket?.setTimeout !== 'function') return;
  socket.setTimeout(0);
  res.once('finish', () => socket.setTimeout(idleTimeoutMs));
}

@Injectable()
export class LongRunningInterceptor implements NestInterceptor {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    outlastIdleTimeout(context.switchToHttp().getResponse<FastifyReply>().raw, this.settings.http.idleTimeoutMs);
    return next.handle();
  }
}

/** A route whose answer may take longer than an idle connection is kept (publishing a large file). */
export const LongRunning = () => applyDecorators(UseInterceptors(LongRunningInterceptor));
