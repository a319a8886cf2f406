import { AgentKey } from './AgentKey.js';
import { AuditEvent } from './AuditEvent.js';
import { ChangelogEntry } from './ChangelogEntry.js';
import { Member } from './Member.js';
import { MemoryNote } from './MemoryNote.js';
import { MemoryUsage } from './MemoryUsage.js';
import { Organization } from './Organization.js';
import { RateLimitCounter } from './RateLimitCounter.js';
import { Setting } from './Setting.js';
import { Workspace } from './Workspace.js';

/** Every entity, for the ORM's discovery. */
export const ENTITIES = [Organization, Workspace, Member, AgentKey, ChangelogEntry, AuditEvent, Setting, RateLimitCounter, MemoryNote, MemoryUsage];

export { AgentKey, AuditEvent, ChangelogEntry, Member, MemoryNote, MemoryUsage, Organization, RateLimitCounter, Setting, Workspace };
