import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../src/database/database';
import type { PgliteDatabase } from '../../src/database/pglite-database';
import { RecordedEvent, toPosition } from '../../src/event-store/event-store';
import type { Decider, DomainEvent } from '../../src/event-store/stream-commands';
import type { Projection } from '../../src/projection-runner/projection';
import { emptyPglite } from './database';

/**
 * Given events, when a command, then events (or a refusal): a decider's rules checked in
 * memory, in milliseconds, as Emmett's DeciderSpecification does.
 *
 *   deciderSpec(endpointDecider).given([created]).when(disable).then([disabled]);
 */
export function deciderSpec<Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>) {
  return {
    given(events: readonly Event[]) {
      return {
        when(command: Command) {
          const decide = () => decider.decide(command, events.reduce(decider.evolve, decider.initialState()));
          return {
            then(expected: readonly Event[]): void {
              expect(decide()).toEqual(expected);
            },
            /** Refused: the thrown error matches (an object of its fields, or an error class). */
            thenRefuses(expected: object | (new (...args: any[]) => Error)): void {
              let thrown: unknown;
              try {
                decide();
              } catch (error) {
                thrown = error;
              }
              if (thrown === undefined) throw new Error('expected the command to be refused; it was decided');
              if (typeof expected === 'function') expect(thrown).toBeInstanceOf(expected);
              else expect(thrown).toMatchObject(expected);
            },
          };
        },
      };
    },
  };
}

/** One in-process PGlite per test file for its projection specs (no socket, no timer: nothing to close). */
let specDatabase: Promise<PgliteDatabase> | undefined;
let specs = 0;

// The file's projection specs share one PGlite; closed after them, or it keeps the jest worker alive.
afterAll(async () => {
  const db = specDatabase;
  specDatabase = undefined;
  await (await db)?.close();
});

/** An event for a projection spec: its stream and, when it matters, its time. */
export interface GivenEvent extends DomainEvent {
  streamId: string;
  createdAt?: Date;
}

/**
 * Given events, then rows: a projection applied, in memory, to a fresh PGlite with only
 * its own tables, as Emmett's PostgreSQLProjectionSpec does.
 *
 *   await projectionSpec(webhookEndpointsProjection).given([...]).then('SELECT ...', [rows]);
 */
export function projectionSpec(projection: Projection) {
  return {
    given(events: readonly GivenEvent[]) {
      return {
        async then(query: string, expected: readonly object[], params: unknown[] = []): Promise<void> {
          const db = await (specDatabase ??= emptyPglite());
          // A schema of its own: the projection's unqualified SQL resolves there (as in a build).
          const schema = `spec_${++specs}`;
          await db.exec(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
          await db.exec(projection.schema);
          await db.transaction(async (tx: Queryable) => {
            for (const [i, event] of events.entries()) await projection.apply(tx, recorded(event, i));
          });
          expect((await db.query(query, params)).rows).toEqual(expected);
        },
      };
    },
  };
}

function recorded(event: GivenEvent, i: number): RecordedEvent {
  return {
    id: randomUUID(),
    streamId: event.streamId,
    revision: i,
    type: event.type,
    data: event.data,
    metadata: {},
    position: toPosition(BigInt(i + 1), BigInt(i + 1)),
    createdAt: event.createdAt ?? new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  };
}
