-- The SHA-256 of dataset shards that landed but are not yet published (issue 41). Not a read
-- model: a cache of what the service computed from storage, keyed by the object's version
-- (S3 ETag, local inode and mtime), so a shard is hashed once, and again only when it is
-- written again. Publishing records each file's sha256 in ListingPublished; these rows then
-- go unread. Losing the table costs a rehash, nothing else.
CREATE TABLE IF NOT EXISTS shard_checksums (
  mode        text        NOT NULL CHECK (mode IN ('test', 'live')),
  path        text        NOT NULL,
  version     text        NOT NULL,
  size        bigint      NOT NULL,
  sha256      text        NOT NULL,
  computed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (mode, path)
);
