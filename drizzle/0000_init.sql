CREATE TABLE `blobs` (
	`digest` text PRIMARY KEY NOT NULL,
	`bytes` blob NOT NULL,
	`size` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `log_checkpoints` (
	`size` integer PRIMARY KEY NOT NULL,
	`root_hash` blob NOT NULL,
	`note` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `log_entries` (
	`idx` integer PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`data` blob NOT NULL,
	`leaf_hash` blob NOT NULL
);
--> statement-breakpoint
CREATE TABLE `log_nodes` (
	`level` integer NOT NULL,
	`idx` integer NOT NULL,
	`hash` blob NOT NULL,
	PRIMARY KEY(`level`, `idx`)
);
--> statement-breakpoint
CREATE TABLE `manifest_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`version` text NOT NULL,
	`digest` text NOT NULL,
	`publisher_id` integer NOT NULL,
	`stored_at` text NOT NULL,
	`attestation` blob NOT NULL,
	`kid` text NOT NULL,
	`log_index` integer NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`yank_reason` text,
	`yanked_at` text,
	`yank_log_index` integer,
	FOREIGN KEY (`digest`) REFERENCES `blobs`(`digest`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`publisher_id`) REFERENCES `publishers`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "manifest_versions_status" CHECK("manifest_versions"."status" IN ('active', 'yanked'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `manifest_versions_log_index_unique` ON `manifest_versions` (`log_index`);--> statement-breakpoint
CREATE UNIQUE INDEX `manifest_versions_name_version` ON `manifest_versions` (`name`,`version`);--> statement-breakpoint
CREATE INDEX `manifest_versions_digest` ON `manifest_versions` (`digest`);--> statement-breakpoint
CREATE TABLE `publishers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`namespace` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `publishers_namespace_unique` ON `publishers` (`namespace`);--> statement-breakpoint
CREATE UNIQUE INDEX `publishers_token_hash_unique` ON `publishers` (`token_hash`);--> statement-breakpoint
CREATE UNIQUE INDEX `publishers_namespace_nocase` ON `publishers` ("namespace" COLLATE NOCASE);--> statement-breakpoint
CREATE TABLE `signing_keys` (
	`kid` text PRIMARY KEY NOT NULL,
	`public_jwk` text NOT NULL,
	`not_before` integer NOT NULL,
	`not_after` integer,
	`log_index` integer
);
