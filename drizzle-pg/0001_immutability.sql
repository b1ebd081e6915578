-- Immutability enforced by the database itself, as drizzle/0001, 0003 and 0004 do for SQLite (issue 16 §1): bytes,
-- attestations, keys and the log are never updated, deleted or truncated; a version's status only moves from active
-- to yanked, once; a key is retired once; a publisher keeps its namespace and is revoked once; a principal keeps its
-- kind, name and token and is revoked once; an approval request never changes what it asks for and moves only
-- pending → approved | denied, approved → consumed, each transition's fields written once. One size per checkpoint
-- and one leaf per index are the primary keys of log_checkpoints and log_entries.
CREATE FUNCTION toolseal_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'P0001';
END;
$$;
--> statement-breakpoint
CREATE FUNCTION toolseal_manifest_versions_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.id, NEW.name, NEW.version, NEW.digest, NEW.publisher_id, NEW.stored_at, NEW.attestation, NEW.kid, NEW.log_index)
     IS DISTINCT FROM (OLD.id, OLD.name, OLD.version, OLD.digest, OLD.publisher_id, OLD.stored_at, OLD.attestation, OLD.kid, OLD.log_index) THEN
    RAISE EXCEPTION 'name@version, bytes and attestation are immutable' USING ERRCODE = 'P0001';
  END IF;
  IF (NEW.status, NEW.yank_reason, NEW.yanked_at, NEW.yank_log_index)
     IS DISTINCT FROM (OLD.status, OLD.yank_reason, OLD.yanked_at, OLD.yank_log_index)
     AND (OLD.status <> 'active' OR NEW.status <> 'yanked') THEN
    RAISE EXCEPTION 'a version can only be yanked once, and never restored' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION toolseal_signing_keys_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.kid, NEW.public_jwk, NEW.not_before) IS DISTINCT FROM (OLD.kid, OLD.public_jwk, OLD.not_before)
     OR (OLD.log_index IS NOT NULL AND NEW.log_index IS DISTINCT FROM OLD.log_index) THEN
    RAISE EXCEPTION 'signing keys are immutable' USING ERRCODE = 'P0001';
  END IF;
  IF OLD.not_after IS NOT NULL AND NEW.not_after IS DISTINCT FROM OLD.not_after THEN
    RAISE EXCEPTION 'a retired key stays retired' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION toolseal_publishers_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.id, NEW.namespace, NEW.created_at) IS DISTINCT FROM (OLD.id, OLD.namespace, OLD.created_at) THEN
    RAISE EXCEPTION 'a publisher''s namespace is immutable' USING ERRCODE = 'P0001';
  END IF;
  IF OLD.revoked_at IS NOT NULL
     AND (NEW.revoked_at, NEW.token_hash) IS DISTINCT FROM (OLD.revoked_at, OLD.token_hash) THEN
    RAISE EXCEPTION 'a revoked publisher stays revoked' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION toolseal_principals_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.id, NEW.kind, NEW.name, NEW.token_hash, NEW.created_at)
     IS DISTINCT FROM (OLD.id, OLD.kind, OLD.name, OLD.token_hash, OLD.created_at) THEN
    RAISE EXCEPTION 'a principal''s kind, name and token are immutable' USING ERRCODE = 'P0001';
  END IF;
  IF OLD.revoked_at IS NOT NULL AND NEW.revoked_at IS DISTINCT FROM OLD.revoked_at THEN
    RAISE EXCEPTION 'a revoked principal stays revoked' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION toolseal_approvals_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.id, NEW.seq, NEW.host_id, NEW.audience, NEW.manifest_name, NEW.manifest_version, NEW.tool, NEW.digest,
      NEW.envelope, NEW.salt, NEW.created_at, NEW.expires_at)
     IS DISTINCT FROM (OLD.id, OLD.seq, OLD.host_id, OLD.audience, OLD.manifest_name, OLD.manifest_version, OLD.tool,
      OLD.digest, OLD.envelope, OLD.salt, OLD.created_at, OLD.expires_at) THEN
    RAISE EXCEPTION 'what an approval request asks for is immutable' USING ERRCODE = 'P0001';
  END IF;
  IF (NEW.status, NEW.decided_by, NEW.decided_at, NEW.reason, NEW.decision_log_index, NEW.consumed_at,
      NEW.consumption_log_index)
     IS DISTINCT FROM (OLD.status, OLD.decided_by, OLD.decided_at, OLD.reason, OLD.decision_log_index, OLD.consumed_at,
      OLD.consumption_log_index)
     AND NOT (
       (OLD.status = 'pending' AND NEW.status IN ('approved', 'denied')
         AND NEW.decided_by IS NOT NULL AND NEW.decided_at IS NOT NULL AND NEW.decision_log_index IS NOT NULL
         AND NEW.consumed_at IS NULL AND NEW.consumption_log_index IS NULL)
       OR (OLD.status = 'approved' AND NEW.status = 'consumed'
         AND (NEW.decided_by, NEW.decided_at, NEW.reason, NEW.decision_log_index)
           IS NOT DISTINCT FROM (OLD.decided_by, OLD.decided_at, OLD.reason, OLD.decision_log_index)
         AND NEW.consumed_at IS NOT NULL AND NEW.consumption_log_index IS NOT NULL)
     ) THEN
    RAISE EXCEPTION 'an approval moves only pending → approved | denied → (approved) consumed, each once' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER blobs_no_update BEFORE UPDATE ON blobs FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('blobs are immutable');
--> statement-breakpoint
CREATE TRIGGER blobs_no_delete BEFORE DELETE ON blobs FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('blobs are immutable');
--> statement-breakpoint
CREATE TRIGGER blobs_no_truncate BEFORE TRUNCATE ON blobs FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('blobs are immutable');
--> statement-breakpoint
CREATE TRIGGER manifest_versions_no_delete BEFORE DELETE ON manifest_versions FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('manifest versions are immutable');
--> statement-breakpoint
CREATE TRIGGER manifest_versions_no_truncate BEFORE TRUNCATE ON manifest_versions FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('manifest versions are immutable');
--> statement-breakpoint
CREATE TRIGGER manifest_versions_update BEFORE UPDATE ON manifest_versions FOR EACH ROW EXECUTE FUNCTION toolseal_manifest_versions_update();
--> statement-breakpoint
CREATE TRIGGER signing_keys_no_delete BEFORE DELETE ON signing_keys FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('signing keys are kept forever');
--> statement-breakpoint
CREATE TRIGGER signing_keys_no_truncate BEFORE TRUNCATE ON signing_keys FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('signing keys are kept forever');
--> statement-breakpoint
CREATE TRIGGER signing_keys_update BEFORE UPDATE ON signing_keys FOR EACH ROW EXECUTE FUNCTION toolseal_signing_keys_update();
--> statement-breakpoint
CREATE TRIGGER log_entries_no_update BEFORE UPDATE ON log_entries FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('the log is append-only');
--> statement-breakpoint
CREATE TRIGGER log_entries_no_delete BEFORE DELETE ON log_entries FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('the log is append-only');
--> statement-breakpoint
CREATE TRIGGER log_entries_no_truncate BEFORE TRUNCATE ON log_entries FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('the log is append-only');
--> statement-breakpoint
CREATE TRIGGER log_nodes_no_update BEFORE UPDATE ON log_nodes FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('the log is append-only');
--> statement-breakpoint
CREATE TRIGGER log_nodes_no_delete BEFORE DELETE ON log_nodes FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('the log is append-only');
--> statement-breakpoint
CREATE TRIGGER log_nodes_no_truncate BEFORE TRUNCATE ON log_nodes FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('the log is append-only');
--> statement-breakpoint
CREATE TRIGGER log_checkpoints_no_update BEFORE UPDATE ON log_checkpoints FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('checkpoints are immutable');
--> statement-breakpoint
CREATE TRIGGER log_checkpoints_no_delete BEFORE DELETE ON log_checkpoints FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('checkpoints are immutable');
--> statement-breakpoint
CREATE TRIGGER log_checkpoints_no_truncate BEFORE TRUNCATE ON log_checkpoints FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('checkpoints are immutable');
--> statement-breakpoint
CREATE TRIGGER publishers_no_delete BEFORE DELETE ON publishers FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('publishers are kept forever');
--> statement-breakpoint
CREATE TRIGGER publishers_no_truncate BEFORE TRUNCATE ON publishers FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('publishers are kept forever');
--> statement-breakpoint
CREATE TRIGGER publishers_update BEFORE UPDATE ON publishers FOR EACH ROW EXECUTE FUNCTION toolseal_publishers_update();
--> statement-breakpoint
CREATE TRIGGER principals_no_delete BEFORE DELETE ON principals FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('principals are kept forever');
--> statement-breakpoint
CREATE TRIGGER principals_no_truncate BEFORE TRUNCATE ON principals FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('principals are kept forever');
--> statement-breakpoint
CREATE TRIGGER principals_update BEFORE UPDATE ON principals FOR EACH ROW EXECUTE FUNCTION toolseal_principals_update();
--> statement-breakpoint
CREATE TRIGGER approvals_no_delete BEFORE DELETE ON approvals FOR EACH ROW EXECUTE FUNCTION toolseal_refuse('approval requests are kept forever');
--> statement-breakpoint
CREATE TRIGGER approvals_no_truncate BEFORE TRUNCATE ON approvals FOR EACH STATEMENT EXECUTE FUNCTION toolseal_refuse('approval requests are kept forever');
--> statement-breakpoint
CREATE TRIGGER approvals_update BEFORE UPDATE ON approvals FOR EACH ROW EXECUTE FUNCTION toolseal_approvals_update();
