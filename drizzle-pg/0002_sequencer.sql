CREATE TABLE "log_jobs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "log_jobs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"kind" text NOT NULL,
	"payload" "bytea" NOT NULL,
	"submitted_by" text NOT NULL,
	"submitted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"outcome" "bytea",
	"finished_at" timestamp with time zone,
	CONSTRAINT "log_jobs_kind" CHECK ("log_jobs"."kind" IN ('publish', 'yank', 'approval-decision', 'approval-consumption')),
	CONSTRAINT "log_jobs_state" CHECK ("log_jobs"."state" IN ('queued', 'done', 'failed', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "sequencer_lease" (
	"id" integer PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"epoch" bigint NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "sequencer_lease_one_row" CHECK ("sequencer_lease"."id" = 1)
);
--> statement-breakpoint
CREATE INDEX "log_jobs_queued" ON "log_jobs" USING btree ("id") WHERE "log_jobs"."state" = 'queued';