CREATE TABLE `witness_cosignatures` (
	`size` integer NOT NULL,
	`witness` text NOT NULL,
	`line` text NOT NULL,
	PRIMARY KEY(`size`, `witness`)
);
