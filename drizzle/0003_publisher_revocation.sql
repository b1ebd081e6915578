ALTER TABLE `publishers` ADD `revoked_at` text;--> statement-breakpoint
-- A publisher is kept forever (versions and attestations name it) and its namespace never changes; it may be revoked
-- once, and a revoked publisher stays revoked and gets no new token.
CREATE TRIGGER `publishers_no_delete` BEFORE DELETE ON `publishers` BEGIN SELECT RAISE(ABORT, 'publishers are kept forever'); END;
--> statement-breakpoint
CREATE TRIGGER `publishers_immutable_columns` BEFORE UPDATE OF `id`, `namespace`, `created_at` ON `publishers`
BEGIN SELECT RAISE(ABORT, 'a publisher''s namespace is immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `publishers_revoke_once` BEFORE UPDATE OF `revoked_at`, `token_hash` ON `publishers` WHEN OLD.`revoked_at` IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'a revoked publisher stays revoked'); END;
