CREATE TABLE `version_bundles` (
	`version_id` integer PRIMARY KEY NOT NULL,
	`kid` text NOT NULL,
	`envelope` text NOT NULL,
	`log_index` integer NOT NULL,
	`integrated_time` integer NOT NULL,
	`promise` blob NOT NULL,
	FOREIGN KEY (`version_id`) REFERENCES `manifest_versions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `version_bundles_log_index_unique` ON `version_bundles` (`log_index`);--> statement-breakpoint
-- Hand-written (as 0001): a version's bundle is signed and logged once, never changed or removed.
CREATE TRIGGER `version_bundles_no_update` BEFORE UPDATE ON `version_bundles` BEGIN SELECT RAISE(ABORT, 'bundles are immutable'); END;
--> statement-breakpoint
CREATE TRIGGER `version_bundles_no_delete` BEFORE DELETE ON `version_bundles` BEGIN SELECT RAISE(ABORT, 'bundles are immutable'); END;
