CREATE TABLE `namespace_verifications` (
	`namespace` text PRIMARY KEY NOT NULL,
	`unverified` integer NOT NULL,
	`domain` text,
	`proven_at` text
);
--> statement-breakpoint
CREATE TABLE `trust_rules` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`namespace` text NOT NULL,
	`issuer` text NOT NULL,
	`audience` text NOT NULL,
	`claims` text NOT NULL,
	`ref_claims` text NOT NULL,
	`oidc_only` integer NOT NULL,
	`created_at` text NOT NULL,
	`removed_at` text
);
--> statement-breakpoint
CREATE INDEX `trust_rules_namespace` ON `trust_rules` (`namespace`);