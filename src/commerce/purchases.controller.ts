import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { createdRange, CREATED_PARAMETERS } from '../platform/created-range';
import { QueryParameters } from '../platform/known-parameters';
import { parseCursor, parseLimit } from '../platform/pagination';
import { OpenPurchaseCheckoutCommand } from './commands/open-checkout';
import { OpenPurchaseDto } from './dto';
import { PurchaseQueries } from './purchase-queries';

/**
 * Purchases (spec part 4): open a hosted checkout, list what the caller bought in its mode.
 * Scope: the read scopes that let a key download what it buys (docs/decisions.md).
 */
@Controller('v1/purchases')
@RequireScope('models:read', 'datasets:read')
export class PurchasesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly purchases: PurchaseQueries,
  ) {}

  @Post()
  open(@Auth() auth: AuthContext, @Body() body: OpenPurchaseDto) {
    return this.commands.execute(new OpenPurchaseCheckoutCommand(auth, body.asset, body.success_url ?? null, body.cancel_url ?? null));
  }

  @Get()
  @QueryParameters('limit', 'cursor', ...CREATED_PARAMETERS)
  list(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    return this.purchases.list(auth, { limit: parseLimit(query.limit, { fallback: 20, max: 100 }), cursor: parseCursor(query.cursor), created: createdRange(query) });
  }
}
