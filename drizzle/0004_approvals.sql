CREATE TABLE `approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`host_id` integer NOT NULL,
	`audience` text NOT NULL,
	`manifest_name` text NOT NULL,
	`manifest_version` text NOT NULL,
	`tool` text NOT NULL,
	`digest` text NOT NULL,
	`envelope` blob NOT NULL,
	`salt` blob NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`decided_by` integer,
	`decided_at` text,
	`reason` text,
	`decision_log_index` integer,
	`consumed_at` text,
	`consumption_log_index` integer,
	FOREIGN KEY (`host_id`) REFERENCES `principals`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`decided_by`) REFERENCES `principals`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "approvals_status" CHECK("approvals"."status" IN ('pending', 'approved', 'denied', 'consumed')),
	CONSTRAINT "approvals_salt" CHECK(length("approvals"."salt") = 32)
);
--> statement-breakpoint
CREATE INDEX `approvals_host_digest` ON `approvals` (`host_id`,`digest`);--> statement-breakpoint
CREATE INDEX `approvals_created_at` ON `approvals` (`created_at`);--> statement-breakpoint
CREATE TABLE `principals` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text,
	CONSTRAINT "principals_kind" CHECK("principals"."kind" IN ('operator', 'host'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `principals_token_hash_unique` ON `principals` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `principals_kind_name` ON `principals` (`kind`,`name`);--> statement-breakpoint
-- Immutability enforced by the database itself (as in 0001): principals are kept forever, their kind, name and token
-- never change, and a revocation holds; an approval request is never deleted, what it asked for (id, host, envelope,
-- digest, salt, times) never changes, its status moves only pending → approved | denied and approved → consumed, and
-- each transition's fields (with its log index) are written once, by that transition.
CREATE TRIGGER `principals_no_delete` BEFORE DELETE ON `principals` BEGIN SELECT RAISE(ABORT, 'principals are kept forever'); END;
--> statement-breakpoint
CREATE TRIGGER `principals_immutable_columns` BEFORE UPDATE OF `id`, `kind`, `name`, `token_hash`, `created_at` ON `principals`
BEGIN SELECT RAISE(ABORT, 'a principal''s kind, name and token are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `principals_revoke_once` BEFORE UPDATE OF `revoked_at` ON `principals` WHEN OLD.`revoked_at` IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'a revoked principal stays revoked'); END;
--> statement-breakpoint
CREATE TRIGGER `approvals_no_delete` BEFORE DELETE ON `approvals` BEGIN SELECT RAISE(ABORT, 'approval requests are kept forever'); END;
--> statement-breakpoint
CREATE TRIGGER `approvals_immutable_columns` BEFORE UPDATE OF `id`, `host_id`, `audience`, `manifest_name`, `manifest_version`, `tool`, `digest`, `envelope`, `salt`, `created_at`, `expires_at` ON `approvals`
BEGIN SELECT RAISE(ABORT, 'what an approval request asks for is immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `approvals_transitions` BEFORE UPDATE OF `status`, `decided_by`, `decided_at`, `reason`, `decision_log_index`, `consumed_at`, `consumption_log_index` ON `approvals`
WHEN NOT (
  (OLD.`status` = 'pending' AND NEW.`status` IN ('approved', 'denied')
    AND NEW.`decided_by` IS NOT NULL AND NEW.`decided_at` IS NOT NULL AND NEW.`decision_log_index` IS NOT NULL
    AND NEW.`consumed_at` IS NULL AND NEW.`consumption_log_index` IS NULL)
  OR (OLD.`status` = 'approved' AND NEW.`status` = 'consumed'
    AND NEW.`decided_by` IS OLD.`decided_by` AND NEW.`decided_at` IS OLD.`decided_at` AND NEW.`reason` IS OLD.`reason`
    AND NEW.`decision_log_index` IS OLD.`decision_log_index`
    AND NEW.`consumed_at` IS NOT NULL AND NEW.`consumption_log_index` IS NOT NULL)
)
BEGIN SELECT RAISE(ABORT, 'an approval moves only pending → approved | denied → (approved) consumed, each once'); END;
