CREATE TABLE "witness_cosignatures" (
	"size" bigint NOT NULL,
	"witness" text NOT NULL,
	"line" text NOT NULL,
	CONSTRAINT "witness_cosignatures_size_witness_pk" PRIMARY KEY("size","witness")
);
