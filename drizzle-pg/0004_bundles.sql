CREATE TABLE "version_bundles" (
	"version_id" integer PRIMARY KEY NOT NULL,
	"kid" text NOT NULL,
	"envelope" text NOT NULL,
	"log_index" bigint NOT NULL,
	"integrated_time" bigint NOT NULL,
	"promise" "bytea" NOT NULL,
	CONSTRAINT "version_bundles_log_index_unique" UNIQUE("log_index")
);
--> statement-breakpoint
ALTER TABLE "version_bundles" ADD CONSTRAINT "version_bundles_version_id_manifest_versions_id_fk" FOREIGN KEY ("version_id") REFERENCES "public"."manifest_versions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Hand-written (as 0001): a version's bundle is signed and logged once, never changed, removed or truncated.
CREATE TRIGGER version_bundles_no_update BEFORE UPDATE ON version_bundles FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('bundles are immutable');
--> statement-breakpoint
CREATE TRIGGER version_bundles_no_delete BEFORE DELETE ON version_bundles FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('bundles are immutable');
--> statement-breakpoint
CREATE TRIGGER version_bundles_no_truncate BEFORE TRUNCATE ON version_bundles FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('bundles are immutable');
