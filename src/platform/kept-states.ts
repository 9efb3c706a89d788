/** A stream's state folded up to `revision`, its last event's. */
export interface Folded<S> {
  state: S;
  revision: number;
  /** Where that event is in the log, when known. */
  position?: string | null;
}

/**
 * The folded states of the streams this process used most recently, so that loading one
 * reads only the events after its revision instead of the whole stream: streams that grow
 * for ever (a ledger with every sale, a listing with every download) then cost the same to
 * load on their thousandth event as on their first. The stream stays the truth: a kept
 * state is only ever extended by the events read after it. Bounded by weight, in whatever
 * unit the caller measures a state's memory in; least recently used out first, except the
 * state just kept.
 */
export class KeptStates<S> {
  private readonly kept = new Map<string, Folded<S> & { weight: number }>();
  private weight = 0;

  constructor(private readonly limit: number) {}

  get(stream: string): Folded<S> | undefined {
    return this.kept.get(stream);
  }

  keep(stream: string, folded: Folded<S>, weight = 1): void {
    this.drop(stream);
    this.kept.set(stream, { ...folded, weight });
    this.weight += weight;
    for (const oldest of this.kept.keys()) {
      if (this.weight <= this.limit || oldest === stream) break;
      this.drop(oldest);
    }
  }

  drop(stream: string): void {
    const kept = this.kept.get(stream);
    if (!kept) return;
    this.weight -= kept.weight;
    this.kept.delete(stream);
  }
}
