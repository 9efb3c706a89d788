/** Rows of the events table as the port's RecordedEvent. */
import { RecordedEvent, toPosition } from '../event-store';

/** Larger than any global_position: (commit, this) sorts after every event of that commit. */
export const LAST_OF_COMMIT = 9223372036854775807n;

export interface EventRow {
  commit_id: string;
  global_position: string;
  event_id: string;
  stream_id: string;
  stream_revision: string;
  type: string;
  data: any;
  metadata: Record<string, unknown>;
  created_at: Date | string;
}

export const COLUMNS = `transaction_id::text AS commit_id, global_position, event_id::text, stream_id,
  stream_revision, type, data, metadata, created_at`;

/** COLUMNS of the events whose type is in the text[] parameter `types`; of the others only the position (event_id null). */
export function columnsOfTypes(types: string): string {
  const ofTypes = (column: string) => `CASE WHEN type = ANY(${types}::text[]) THEN ${column} END`;
  return `transaction_id::text AS commit_id, global_position, ${ofTypes('event_id::text')} AS event_id,
  ${ofTypes('stream_id')} AS stream_id, ${ofTypes('stream_revision')} AS stream_revision, type, ${ofTypes('data')} AS data,
  ${ofTypes('metadata')} AS metadata, ${ofTypes('created_at')} AS created_at`;
}

export function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: Number(row.stream_revision),
    type: row.type,
    data: row.data,
    metadata: row.metadata ?? {},
    position: toPosition(row.commit_id, row.global_position),
    createdAt: row.created_at instanceof Date ? row.created_at : new Date(row.created_at),
  };
}
