#pragma once
// The step and checkpoint protocol between trainers and parameter-server shards: who waits for whom, in which
// order. It is stated here once; the memory it works on is in ps/windows.h, and both sides call the meetings
// below instead of writing their own barriers. Every wait runs under the watchdog (comm/watchdog.h).
//
// Start. Servers initialise their slices, then every rank meets at a world barrier (meet_all_ranks). All-reduce
//   and local runs have no servers and no start meeting.
//
// The schedule. Passes, steps per pass, and (where trainers step together) the checkpoint and stop after each
//   step are computed once per run, as a value every rank reads (run_common/run_schedule.h, from the configuration, the
//   layout and the resumed state); servers and trainers walk the same value, so sync rounds and checkpoints line up
//   without messages: in sync modes every trainer takes the largest trainer's count (a trainer out of samples
//   contributes empty batches). Which meetings a mode has follows from its traits (modes/traits.h).
//
// Sync step (--mode sync), one round per step, in one of two transports (ps/sync_transport.h; --overlap, chosen
// in job/job.cc, the same on every rank); both compute the same bits.
// One-sided (SyncTransport::kOneSided), all over the world:
//   trainers put gradient and sample count into their slot on every shard;
//   all_gradients_written (barrier)           servers sum the slots in trainer order (the same bits every run),
//                                             then run their optimizer once;
//   agree_on_step_flags (MPI_Allreduce BOR)   the second meeting: the parameters of the step are published, and
//                                             every rank's StepFlags wishes come out OR-ed;
//   trainers get the parameters.
// Streamed (SyncTransport::kStreamed), in messages (ps/block_messages.h) on the world's duplicate:
//   trainer: before its computation, sends its sample count to every shard (kCountTag); the last step's blocks
//            may still be on their way (a block's receive is complete before the block's next one is posted);
//   shard:   begins the flag agreement (StepFlagAgreement), receives every trainer's count (the weights), and
//            posts a receive for each of its blocks from each trainer with samples;
//   trainer: sends each block of its gradient to the shard holding it as soon as the backward pass has finished
//            the block (nn/parameter_stream.h; a model that cannot stream: all blocks after the backward pass; a
//            trainer without samples sends none) and at once posts the receive of that block's update into the
//            parameters, whose values there the step reads no more;
//   shard:   as soon as every trainer's part of a block is in, sums the parts in trainer order (the same bits
//            every run, and whatever order the blocks come in), updates the block (Optimizer::update_range) and
//            sends it to every trainer; after the last block, bumps the version;
//   both:    finish the flag agreement (an MPI_Iallreduce BOR begun on entering the step, by a trainer after its
//            computation): every rank's StepFlags wishes come out OR-ed;
//   trainer: the next forward pass waits for each block just before it reads it. A step whose agreed flags are
//            not 0 (a checkpoint, a stop), the end of a pass and the end of training wait for every block first.
//   Nobody waits for a barrier: a trainer waits for its own sends, for the agreement, and for the blocks it reads.
// Node aggregation (--node-aggregation, job/node_aggregation.h; one-sided only): the trainers form
//   push groups (comm/push_groups.h: the trainers of one node; the group's leader is its lowest trainer), and each
//   server holds one slot per group (ps/windows.h). Over the group's communicator (modes/sync_node_groups.cc):
//   every member sends its sample count to the leader (MPI_Gather), then its gradient (one message; none from a
//   member without samples); the leader adds the gradients in trainer order, each weighted by its count over the
//   group's, receiving the next while it adds one (never in arrival order), and puts the group's mean with the
//   group's count into the group's slot on every shard. Then every rank, leader or not, takes the two meetings
//   above; the servers sum the slots in group order as they sum trainers' (count over total). The leader gets
//   the parameters and broadcasts them to its group (MPI_Bcast: a copy). Bits: reproducible for a given layout
//   (the same groups); those of one slot per trainer where there is one group of all trainers (the leader's sum is
//   the servers' expression, times 1) or groups of one, otherwise not: the sum is associated otherwise (trainer
//   order within a group, then group order; measured within relative 3e-7 on the test MLP). A server takes G
//   pushes and serves G pulls per step, G the groups. Row tables held by rows stay per trainer: before the first
//   meeting each trainer also puts its row slots (as below) and writes its samples into its control word on every
//   shard; the servers weight its rows by them (whole numbers: the weights are exactly those of one slot per trainer).
// Row tables in a sync step (ps/table_plan.h, when the servers hold a table by rows): the dense part goes as
//   above, but the flags are agreed by the two meetings (streamed: not by the nonblocking agreement). Before its
//   forward pass a trainer gets the rows its batch looks up in every table (one-sided, one get per server for all
//   tables: ps/table_windows.h; no server involved: the rows are quiet
//   between the second meeting of one step and the first of the next); with its dense gradient it puts those
//   rows' gradients and indices into its row slots on every shard (an empty slot when it had no batch), then
//   all_gradients_written (world barrier): each server, done with its dense part, sums the row slots in
//   trainer order with the dense sum's weights and updates the touched rows;
//   agree_on_step_flags (MPI_Allreduce BOR): the rows (and, one-sided, the dense part) are published and the
//   flags agreed.
//   A trainer holds only its batch's rows (its row caches); at the end of a pass the lead trainer gets,
//   one-sidedly, the rows of each evaluation batch and the whole table a block of rows at a time for the pass
//   folder, while the servers wait in the end-of-pass checkpoint.
// Keyed tables in a sync step (--table-keys exact, ps/keyed_rows.h; either transport): as row tables above, with
//   one more epoch before the rows' get: a trainer finds the rows of its batch's distinct ids in the servers'
//   indexes itself, one-sidedly (ps/key_lookup.h: one get per server, every id's run of D buckets from its home on
//   its owner key_owner(id), for all tables at once), and reads an absent id's owner's default row (local row 0,
//   zeros). No server CPU on the path, and two round trips per server and step whatever the number of tables:
//   measured against a request the server answers (benchmarks/keyed_lookup.sh), the same cost on one node; the
//   request is 3x faster over TCP, but would need the servers to answer inside every wait of theirs (the
//   end-of-pass checkpoint, while the lead evaluates), where one-sided reads need nothing. The index and the rows
//   are quiet from the second meeting of one step to the first of the next, so no lock is contended and no id
//   is evicted between a trainer's read and its push. With its gradients a trainer puts, after each keyed table's
//   row indices in its row_ids slot, the distinct ids of the batch that server owns (its sightings); after the
//   first meeting each server updates the rows (never the default row), then meets: every trainer's sightings in
//   trainer order go to KeyedRows::meet at the step's global step (admissions, recency, evictions: the same bits
//   every run), admitted rows get their first values and a fresh optimizer state, freed rows zeros, and the
//   counters in the key window are rewritten; all before the second meeting, after which the new index and rows
//   are published. An id first seen at a step reads the default row at that step and has its row from the next.
//   A pass folder reads every server's index whole (the lead trainer, servers in the end-of-pass checkpoint).
// Keyed tables in an async step (async, ssp): a trainer finds its rows and gets them as in sync, each epoch under a
//   shared lock (the server changes the index and the rows only under its exclusive lock, so each read is whole);
//   its row slot also carries the id each row was read for. The server applies the push's rows, except the default
//   row and any row no longer held for its id (evicted and perhaps given to another id between the trainer's two
//   reads and its push: the gradient is dropped and counted), then meets that push's sightings alone, at its
//   update count, before it bumps applied_seq. A row read between its eviction and its reuse reads zeros or
//   another id's values for one step: async's staleness, counted only where it drops a gradient.
// All-reduce step: the trainers agree on the step's sample count and flags in one MPI_Allreduce over the trainers,
//   sum their count-weighted gradients, and each applies the same update; replicas are compared (CRC-32) at the
//   end of every pass. With buckets streamed (allreduce/bucket_stream.h) the collectives start in one order on
//   every trainer: the count's MPI_Iallreduce before the computation, each bucket's MPI_Iallreduce in descending
//   order (during the backward pass, or all at the end for a trainer without samples), then the blocking
//   agreement on the flags once every bucket is summed. Local step: the only rank's flags are the agreed flags.
//
// Checkpoints with a common step boundary (sync, all-reduce, local): after a step every rank holds the same
//   (pass, step, global step) and agreed flags. When a checkpoint is due (RunSchedule::after_common_step: agreed
//   kCheckpointNow, or every --checkpoint-every-steps) and the step is not the pass's last, every rank saves
//   (collective over the world) and ends the run "stopped" if the flags carry kStopAfterCheckpoint. At the end of
//   every pass every rank saves once more (pass + 1, step 0); a stop flag from the pass's last step then ends the
//   run, completed only if that pass was the last.
//
// GEO step (--mode geo, GEO-SGD): the trainers take the schedule's common steps, but meet the servers only after
//   every --geo-steps-th step and after the pass's last (the mode's cadence, exchange/meeting_cadence.h); the
//   servers loop over those meetings alone. In between each trainer runs plain SGD on its own copy and calls nobody. A
//   meeting is a sync round above (either transport, nothing streamed during the computation), where a trainer sends
//   its change since its last pull with the samples it trained meanwhile, the servers add the sample-weighted mean
//   change (instead of running the optimizer), the flags are agreed, and every trainer gets the parameters: after a
//   meeting every trainer holds the servers' model. Checkpoints and stops happen at meetings only.
//   Row tables held by rows: between meetings a trainer gets a row (one-sidedly, as in sync) at its first lookup
//   since the last meeting and then keeps it (ps/table_client.h hold_rows_until_push): the servers change no row
//   between meetings, so what it gets is the row as of the last meeting. At a meeting it puts the change of every
//   row it held into its row slots, as sync puts gradients (its slots hold --geo-steps batches' rows), and the
//   servers add the rows' sample-weighted mean change. Evaluation and the pass folder read rows after a meeting.
// Async step (--mode async): a trainer puts its gradient into its slot (free: its previous push is applied; with
//   pushes streamed, ps/push_stream.h, block by block during the backward pass in one epoch that completes before
//   the announcement), writes pushed_seq on every shard (the slot carries the parameters' version the gradient came
//   from) and polls until every shard's applied_seq reached it (never waiting for other trainers), then gets the
//   parameters as they are. Servers poll their control words, apply each new slot as its own update under an exclusive
//   lock on params, bump the version and publish the staleness, then applied_seq; they keep calling MPI between polls,
//   which osc/pt2pt needs for progress. Nobody locks the control words: they are read and written by atomic operations
//   in one lock_all epoch per rank (ps/control_words.h), so the many trainers polling a shard never keep its server
//   waiting.
// Row tables in an async step: the trainer gets its batch's rows as they are (a shared-lock epoch: each table
//   arrives whole, between two servers' updates), and puts its row slots before it announces the push; the
//   server applies a push's rows right after its dense slot, under an exclusive lock on the rows. The slots are
//   free again once the push is applied, as the dense one. Evaluation and the pass folder read rows as in sync.
// SSP gate (--mode ssp): async steps; after each step a trainer publishes its clock (steps finished in the pass)
//   on shard 0 and waits while it is more than --staleness steps ahead of the slowest trainer, or until a
//   checkpoint request stands (a slower trainer may be quiescing for it: go to the step boundary and join).
//   Clocks are set to 0 before a trainers' barrier at the start and after every pass; a trainer done with its
//   pass publishes kClockPassDone so that nobody waits for it.
// Async end of pass: a trainer waits until its own pushes are applied, then meets the other trainers at a
//   nonblocking barrier, joining any checkpoint requested meanwhile (a trainer still stepping asked for it and will
//   not arrive before it is written; when that checkpoint is a stop, the meeting and the rest of the end of the
//   pass are abandoned: the trainer ends the run right there, as the trainer that asked for the stop did at its
//   step boundary, so no trainer enters a trainers' collective that another one skips); then it gets the
//   parameters and a second trainers' barrier keeps anyone from pushing before all got the same state.
// Dynamic dispatch: trainers take chunk tickets from a counter on shard 0; after the end of the pass the lead
//   trainer rewinds it while the other trainers wait at a barrier.
// End of pass (every mode): trainers average the model state (run_common/model_state.h), agree on the pass's figures,
//   the lead evaluates and writes the pass folder while the others wait at a trainers' barrier.
// Evaluation between steps (--eval-every-steps; modes whose trainers step together): after a step that ends in a
//   meeting, every trainer waits for its step's parameters (a streamed sync step's blocks), averages the model
//   state, and waits at a trainers' barrier while the lead evaluates. The servers wait in the next step's first
//   meeting meanwhile; the rows the lead fetches one-sidedly are quiet there, as at the end of a pass.
//
// Async checkpoints (async, ssp): there is no common step, so checkpoints go by request.
//   1. Any trainer ORs its wish into the request word on shard 0 (a signal: kCheckpointNow | kStopAfterCheckpoint;
//      the lead trainer: the step and time triggers). For the end-of-pass checkpoint the lead posts kCheckpointNow
//      before the trainers' end-of-pass barrier, so every trainer sees it after that barrier.
//   2. A trainer that sees a standing request at a step boundary (or while waiting at the end-of-pass meeting)
//      quiesces: waits until its pushes are applied and adds itself to the quiesced count on shard 0.
//   3. Servers look at both words when idle; once all T trainers are quiesced they join.
//   4. Every rank saves (collective over the world).
//   5. end_async_checkpoint: rank 0 (shard 0) broadcasts the request as it saw it with every trainer quiesced, so
//      that everyone acts on the same bits; it clears both words; a world barrier lets nobody go on (and post a new
//      request) before they are cleared. A request carrying kStopAfterCheckpoint ends the run "stopped".
//
// End of training. Async trainers wait until their pushes are applied and announce "done" on every shard;
//   servers return once all T announced and nothing is left to apply. Every rank then meets at a world barrier
//   (meet_all_ranks) so that nobody frees the windows while another rank still uses them.
#include <mpi.h>

#include <cstdint>
#include <functional>

namespace pstrain::exchange {

// Control decisions every rank takes together at a step boundary (agreed by OR), or the request bits of an async
// checkpoint.
enum StepFlags : int {
  kCheckpointNow = 1,        // write a checkpoint after this step
  kStopAfterCheckpoint = 2,  // ... then end the job cleanly (SIGTERM / SIGUSR1)
};

inline bool stops_after_checkpoint(std::int64_t flags) {
  return (flags & kStopAfterCheckpoint) != 0;
}

// The world barrier at the start and at the end of training, under a watchdog wait named `what`.
void meet_all_ranks(const char* what);

// Sync step without row tables: the flag agreement alone, nonblocking, so that it never makes a rank wait for
// the servers' last block. Every rank begins it as it enters the step (a trainer: when its computation is done)
// and finishes it as it leaves; returns the OR of every rank's flags. The caller holds a watchdog wait.
class StepFlagAgreement {
 public:
  void begin(MPI_Comm world, int flags);
  int finish();

 private:
  int flags_ = 0;
  int agreed_ = 0;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// Sync step with row tables, first meeting (world barrier): every trainer's row slots are complete. The caller
// holds a watchdog wait.
void all_gradients_written();
// Sync step with row tables, second meeting (world): the rows are published; returns the OR of every rank's
// `flags`.
// The caller holds a watchdog wait.
int agree_on_step_flags(int flags);
// A trainer's side of both meetings, its gradient (and row slots) written: waits while the servers update, and
// returns the agreed flags. The caller holds a watchdog wait.
int wait_for_the_servers_update(int flags);

// The trainers' own meetings, collective over the trainers' communicator, each named for what it orders (the
// caller holds a watchdog wait):
// ssp: every trainer's clock is published (at the start, and reset after a pass) before anyone gates on it.
void clocks_published(MPI_Comm trainers);
// Async end of pass: every trainer got the same parameters before anyone pushes again.
void every_trainer_pulled(MPI_Comm trainers);
// Dynamic dispatch: the lead trainer rewound the dispatcher before anyone takes a ticket of the next pass.
void dispatcher_rewound(MPI_Comm trainers);
// End of pass: the lead trainer evaluated and wrote the pass folder before anyone starts the next pass.
void lead_done_with_pass(MPI_Comm trainers);
// --eval-every-steps, between two steps: the lead trainer evaluated the test set before anyone takes the next step.
void lead_done_evaluating(MPI_Comm trainers);

// Async end of pass, the trainers' first meeting: nonblocking, so that a trainer waiting in it can join a
// checkpoint that a trainer still stepping asks for. A meeting abandoned for a stop is never completed: the job
// ends right after, and no trainer enters another collective of the trainers.
class PassEndMeeting {
 public:
  explicit PassEndMeeting(MPI_Comm trainers);
  bool arrived();  // every trainer is in

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// Step 5 of an async checkpoint, collective over the world, every rank after its save. `request_at_root` is
// what shard 0 saw (ignored elsewhere); `clear_at_root` clears it, called on world rank 0 only. Returns the
// request bits every rank acts on.
std::int64_t end_async_checkpoint(std::int64_t request_at_root, const std::function<void()>& clear_at_root);

}  // namespace pstrain::exchange
