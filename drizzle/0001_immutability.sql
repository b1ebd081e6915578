-- Immutability enforced by the database itself, not only by code: bytes, attestations, keys and the log
-- can never be updated or deleted; a version's status may only move from active to yanked, once.
CREATE TRIGGER `blobs_no_update` BEFORE UPDATE ON `blobs` BEGIN SELECT RAISE(ABORT, 'blobs are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `blobs_no_delete` BEFORE DELETE ON `blobs` BEGIN SELECT RAISE(ABORT, 'blobs are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `manifest_versions_no_delete` BEFORE DELETE ON `manifest_versions` BEGIN SELECT RAISE(ABORT, 'manifest versions are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `manifest_versions_immutable_columns` BEFORE UPDATE OF `id`, `name`, `version`, `digest`, `publisher_id`, `stored_at`, `attestation`, `kid`, `log_index` ON `manifest_versions`
BEGIN SELECT RAISE(ABORT, 'name@version, bytes and attestation are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `manifest_versions_yank_once` BEFORE UPDATE OF `status`, `yank_reason`, `yanked_at`, `yank_log_index` ON `manifest_versions`
WHEN OLD.`status` <> 'active' OR NEW.`status` <> 'yanked'
BEGIN SELECT RAISE(ABORT, 'a version can only be yanked once, and never restored'); END;
--> statement-breakpoint
CREATE TRIGGER `signing_keys_no_delete` BEFORE DELETE ON `signing_keys` BEGIN SELECT RAISE(ABORT, 'signing keys are kept forever'); END;
--> statement-breakpoint
CREATE TRIGGER `signing_keys_immutable_columns` BEFORE UPDATE OF `kid`, `public_jwk`, `not_before`, `log_index` ON `signing_keys`
WHEN OLD.`log_index` IS NOT NULL OR NEW.`kid` <> OLD.`kid` OR NEW.`public_jwk` <> OLD.`public_jwk` OR NEW.`not_before` <> OLD.`not_before`
BEGIN SELECT RAISE(ABORT, 'signing keys are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `signing_keys_retire_once` BEFORE UPDATE OF `not_after` ON `signing_keys` WHEN OLD.`not_after` IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'a retired key stays retired'); END;
--> statement-breakpoint
CREATE TRIGGER `log_entries_no_update` BEFORE UPDATE ON `log_entries` BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `log_entries_no_delete` BEFORE DELETE ON `log_entries` BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `log_nodes_no_update` BEFORE UPDATE ON `log_nodes` BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `log_nodes_no_delete` BEFORE DELETE ON `log_nodes` BEGIN SELECT RAISE(ABORT, 'the log is append-only'); END;
--> statement-breakpoint
CREATE TRIGGER `log_checkpoints_no_update` BEFORE UPDATE ON `log_checkpoints` BEGIN SELECT RAISE(ABORT, 'checkpoints are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `log_checkpoints_no_delete` BEFORE DELETE ON `log_checkpoints` BEGIN SELECT RAISE(ABORT, 'checkpoints are immutable'); END;
