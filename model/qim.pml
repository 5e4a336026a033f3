/*
 * QIM's delivery rules for one shard, as a Promela model checked exhaustively by Spin (model/README.md).
 *
 * What runs: two MailboxNodes that take the shard through a lease, materialise the shard's mailbox log in
 * pages (begin: identity claims; entry writes; finish: the frontier write), crash and come back, pause
 * (any process may be starved while the clock runs), lose or half-land writes, run on a clock that may
 * fall behind (the lease's first line then fails) and hand the shard over on an operator's move; a
 * client that SYNCs after every change of the store, de-duplicating by message id; and a checker that,
 * once nothing can move any more, heals (every lease expires, one node finishes the log) and checks
 * that every message reached the client.
 *
 * The rules, and where they live in the code:
 *   R1 frontier per (shard, epoch), blind write, monotonic within its epoch    ADR-0022 s.1-2, decision 7
 *   R2 a reader sees epoch e's entries only up to epoch e's own frontier      decision 7, read_mailbox
 *   R3 identity per (shard, epoch, id): first observation wins, a repeat is
 *      Existing at the first offset (no new entries)                          ADR-0022 s.2, decisions 2-3
 *   R4 the frontier passes a record only after its identity write is stored   decisions 38, 40
 *   R5 entries before the frontier; a failed page moves nothing               ADR-0022 s.4
 *   R6 leases: epoch = max(lease epoch, highest frontier epoch) + 1; holder
 *      believes ttl - margin from its send time, checked before each write    decisions 18, 22
 *   R7 the store's fence: re-read the highest epoch every FENCE_PAGES pages
 *      and after a failed write; a higher epoch stops the owner for good      decision 8
 *   R8 a worker starts at the highest stored frontier; after an uncertain
 *      frontier write it reloads it and drops what it covers                  shard_worker.cc
 *   R9 a planned move: the holder drains to the log end and releases; only
 *      the target may take the shard meanwhile                                decision 30
 *
 * Properties (assertions; model/README.md says how each maps to the history checker's):
 *   P1 no acknowledged loss: after healing, the client that followed the mailbox through the faults has
 *      shown every message of the log, and a fresh reader finds each                      (Checker)
 *   P2 no entry is visible above its own epoch's frontier                                  (sync)
 *   P3 one visible copy of a message per epoch (a), and the de-duplicating client shows
 *      each message at most once (b)                                                       (sync)
 *   P4 a stale owner stops within its bound: after a higher epoch's first frontier write,
 *      it starts at most FENCE_PAGES frontier writes                                       (frontier)
 *
 * Mutants (compile-time switches; each must make Spin find a counterexample, model/check.sh):
 *   MUTANT_LEAK_READ             readers take every epoch up to the highest frontier (ADR-0022 as
 *                                written, the old leak): breaks "nothing visible above its frontier"
 *   MUTANT_FRONTIER_BEFORE_IDENT the finish does not wait for the page's identity writes (R4 dropped):
 *                                breaks "one copy per epoch"
 *   MUTANT_NO_FENCE              no fence check (R7 dropped): a stale owner whose lease check failed
 *                                goes on writing: breaks "a stale owner stops within its bound"
 */

#define N 3            /* records in the shard's mailbox log: A at 0, B at 1, A again at 2 (a replay) */
#define NMSG 2         /* message ids: A = 0, B = 1 */
#define EMAX 7         /* epochs 1..EMAX-1; the checker's healing takes one */
#ifndef TMAX
#define TMAX 4         /* the clock runs 0..TMAX */
#endif
#ifndef TTL
#define TTL 3          /* lease ttl, as the lease store counts it */
#endif
#ifndef MARGIN
#define MARGIN 1       /* the holder believes its lease ttl - margin from when it sent the request */
#endif
#ifndef SKEW
#define SKEW 3         /* a node's clock that falls behind does so by this much (> MARGIN) */
#endif
#ifndef FENCE_PAGES
#define FENCE_PAGES 1  /* QIM_MAILBOX_FENCE_CHECK_PAGES of the model */
#endif
#ifndef PAGE_MAX
#define PAGE_MAX 2     /* records per page */
#endif
#ifndef CRASHES
#define CRASHES 1      /* node crashes in a run */
#endif
#ifndef UNCERTAIN
#define UNCERTAIN 1    /* frontier writes that fail after landing, or time out without landing */
#endif
#ifndef SKEWS
#define SKEWS 1        /* clocks that fall behind */
#endif
#ifndef LOSSES
#define LOSSES 1       /* identity writes lost */
#endif
#ifndef MOVES
#define MOVES 1        /* planned shard moves */
#endif

#define LT (slow -> (now > SKEW -> now - SKEW : 0) : now)   /* a node's own clock */
#define IDX(e, o) ((e) * N + (o))
#define IDM(e, m) ((e) * NMSG + (m))

byte msg_of[N];

/* The lease store (R6, R9). */
byte l_epoch;      /* the highest epoch ever granted */
byte l_owner;      /* 0: free, else node id */
byte l_expiry;     /* when the store lets the lease lapse */
byte moving_to;    /* 0: no move pending, else its target */

/* The mailbox store. */
byte fr[EMAX];              /* R1: frontier row per epoch, as a count: offsets < fr[e] are covered */
bool ent[EMAX * N];         /* the recipient's entry at seq (epoch, offset) */
byte ident[EMAX * NMSG];    /* R3: canonical offset + 1 of (epoch, id); 0: no identity stored */

byte now;                   /* the clock */
byte crashes = CRASHES;
byte uncertain = UNCERTAIN;
byte skews = SKEWS;
byte moves = MOVES;
byte losses = LOSSES;

/* Ghosts for the properties. */
byte fenced_at[EMAX];       /* for epoch e: 1 once a higher epoch's first frontier write landed */
byte stale_writes[EMAX];    /* frontier writes of epoch e started after that */
byte shown[NMSG];           /* how often the de-duplicating client showed each message */
byte cur_e, cur_o;          /* the client's cursor: seq (cur_e, cur_o - 1); cur_o 0 = nothing yet */
bool seen_id[NMSG];         /* the client's de-duplication window (every id: see model/README.md) */
byte se, so, st, ca, cb;    /* sync's scratch, zero between steps */

/* t := the highest epoch with a frontier row (0: none). */
inline top_epoch(t) {
  t = EMAX - 1;
  do
  :: t > 0 && fr[t] == 0 -> t--
  :: else -> break
  od
}

/* Is the entry (e, o) visible to a reader? R2, or the leak. */
#ifdef MUTANT_LEAK_READ
#define VISIBLE(e, o, top) (ent[IDX(e, o)] && ((e) < (top) || ((e) == (top) && (o) < fr[top])))
#else
#define VISIBLE(e, o, top) (ent[IDX(e, o)] && (o) < fr[e])
#endif

/* A SYNC of the client from its cursor, and the store's promises on what it reads. */
inline sync() {
  d_step {
  top_epoch(st);
  se = 1;
  do
  :: se < EMAX ->
     ca = 0; cb = 0;
     so = 0;
     do
     :: so < N ->
        if
        :: VISIBLE(se, so, st) ->
           /* P2: nothing is visible above its own epoch's frontier. */
           assert(so < fr[se]);
           /* P3a: within one epoch a message has one visible copy (R3, R4). */
           if
           :: msg_of[so] == 0 -> ca++
           :: else -> cb++
           fi;
           assert(ca <= 1 && cb <= 1);
           /* The client: entries above its cursor, in seq order, each id shown once. */
           if
           :: se > cur_e || (se == cur_e && so + 1 > cur_o) ->
              if
              :: !seen_id[msg_of[so]] -> seen_id[msg_of[so]] = true; shown[msg_of[so]]++
              :: else -> skip
              fi;
              cur_e = se; cur_o = so + 1
           :: else -> skip
           fi
        :: else -> skip
        fi;
        so++
     :: else -> break
     od;
     se++
  :: else -> break
  od;
  /* A complete SYNC is trusted up to the page's frontier (the highest epoch's). */
  if
  :: st > cur_e || (st == cur_e && fr[st] > cur_o) -> cur_e = st; cur_o = fr[st]
  :: else -> skip
  fi;
  /* P3b: the de-duplicating client shows each message at most once. */
  assert(shown[0] <= 1 && shown[1] <= 1);
  se = 0; so = 0; st = 0; ca = 0; cb = 0
  }
}

proctype Clock() {
end:
  do
  :: atomic { now < TMAX -> now++ }
  od
}

proctype Admin() {
  /* R9: `qim admin shard move N --to NODE`: to the node that does not hold the shard. */
end:
  atomic { moves > 0 && l_owner != 0 && moving_to == 0 && now < l_expiry -> moves--; moving_to = 3 - l_owner }
}


/* R7: owner_frontier: every FENCE_PAGES frontier writes, re-read the highest epoch. */
inline fence_check() {
  fail = false;
#ifndef MUTANT_NO_FENCE
  if
  :: pages >= FENCE_PAGES ->
     top_epoch(t);
     pages = 0;
     if
     :: t > ep -> fail = true
     :: else -> skip
     fi;
     t = 0
  :: else -> skip
  fi
#endif
}

/* R7: after a failed write, look for a newer owner at once. */
inline after_failed_write() {
  fail = false;
#ifndef MUTANT_NO_FENCE
  top_epoch(t);
  pages = 0;
  if :: t > ep -> fail = true :: else -> skip fi;
  t = 0
#endif
}

/* R1: a blind write of this epoch's row, monotonic by its write timestamp (the offset). */
inline write_frontier() {
  if
  :: fr[ep] == 0 ->
     /* The first frontier of this epoch: every lower epoch's owner is stale from now on (P4). */
     o = 1;
     do :: o < ep -> fenced_at[o] = 1; o++ :: else -> break od
  :: else -> skip
  fi;
  if :: pe > fr[ep] -> fr[ep] = pe :: else -> skip fi;
  sync()
}

/* The identity writes still in flight when the page ends (only under MUTANT_FRONTIER_BEFORE_IDENT) or
   when the process dies: each lands or is lost. */
inline settle_pending() {
  o = 0;
  do
  :: o < N ->
     if
     :: pend[o] == 1 -> ident[IDM(ep, msg_of[o])] = o + 1
     :: pend[o] == 1 && losses > 0 -> losses--
     :: else -> skip
     fi;
     pend[o] = 0; canon[o] = 0;
     o++
  :: else -> break
  od;
  pe = 0; o = 0
}

proctype Node(byte me) {
  byte ep;             /* the epoch of this node's grant */
  byte dl;             /* its lease deadline, on its own clock */
  bool slow;           /* its clock fell behind by SKEW */
  byte pos;            /* the next record of the log to materialise */
  byte pe;             /* the end of the page in hand */
  byte pages;          /* frontier writes since its last fence check */
  byte canon[N + 2];       /* per record of the page: canonical offset + 1 */
  byte pend[N + 2];        /* per record: its identity write 0 none/done, 1 in flight, 2 lost */
  bool draining;
  bool fail;
  byte t, o;

idle:
end_idle:
  do
  :: atomic {
       /* R6 + R9: a free or expired lease, or our own (a restart under the same id), and no move to
          another node pending; the epoch rises above every epoch the lease or the store has seen. */
       (l_owner == 0 || now >= l_expiry || l_owner == me) && (moving_to == 0 || moving_to == me) ->
       top_epoch(t);
       ep = (l_epoch > t -> l_epoch : t) + 1;
       assert(ep < EMAX - 1);   /* the model's epochs suffice (the real bound, 65535, fails closed) */
       l_epoch = ep; l_owner = me; l_expiry = now + TTL;
       if :: moving_to == me -> moving_to = 0 :: else -> skip fi;
       dl = LT + TTL - MARGIN;
       /* R8: the worker starts at the highest stored frontier (its own grant is above every epoch). */
       pos = fr[t]; pages = 0; draining = false;
       t = 0
     }
     goto work
  :: atomic { skews > 0 && !slow -> skews--; slow = true }
  od;

work:
  do
  :: atomic { pos >= N && !draining -> goto stopped }   /* nothing more to do: keep the lease */
  :: atomic { pos >= N && draining ->
       /* R9: drained to the log end, frontier durable: release (the epoch stays). */
       if :: l_owner == me && l_epoch == ep -> l_owner = 0 :: else -> skip fi;
       goto idle }
  :: atomic {
       /* R6: renew, three times inside the believed window in the real loop; here whenever the store
          would still extend it. A lease that is gone (expired, taken) removes the shard. */
       l_owner == me && l_epoch == ep && now < l_expiry && now + TTL > l_expiry ->
       l_expiry = now + TTL;
       dl = LT + TTL - MARGIN }
  :: atomic { moving_to != 0 && moving_to != me && !draining -> draining = true }
  :: atomic { skews > 0 && !slow -> skews--; slow = true }
  :: pos < N -> goto begin
  :: atomic { crashes > 0 -> crashes--; goto crash }
  od;

begin:
  atomic {
    /* R6, first line: no write after the believed deadline. */
    if :: LT >= dl -> goto idle :: else -> skip fi;
    /* R7: owner_frontier's periodic fence check. */
    fence_check();
    if :: fail -> fail = false; goto idle :: else -> skip fi;
    /* The page: what is queued, up to PAGE_MAX. */
    if
    :: pe = pos + 1
    :: pos + 2 <= N && PAGE_MAX >= 2 -> pe = pos + 2
    fi;
    /* R3: one claim per record; a Fresh claim leaves its identity write in flight (decision 38). */
    o = pos;
    do
    :: o < pe ->
       if
       :: ident[IDM(ep, msg_of[o])] == 0 -> canon[o] = o + 1; pend[o] = 1
       :: else -> canon[o] = ident[IDM(ep, msg_of[o])]; pend[o] = 0
       fi;
       o++
    :: else -> break
    od;
    /* write_chunks, in the same step as the begin (its checks passed a moment ago; nothing another
       process does can tell the two steps apart, and one step keeps the state space small): the entries
       of the records that are their own first observation, invisible until a frontier covers them (R2),
       idempotent when written again. */
    o = pos;
    do
    :: o < pe ->
       if :: canon[o] == o + 1 -> ent[IDX(ep, o)] = true :: else -> skip fi;
       o++
    :: else -> break
    od;
#ifdef MUTANT_LEAK_READ
    sync();   /* under the leak, entries are visible when written */
#endif
  }

finish:
  do
  :: atomic {
       /* An identity write lands, or is lost. */
       pend[pos] == 1 -> ident[IDM(ep, msg_of[pos])] = pos + 1; pend[pos] = 0 }
  :: atomic { pend[pos] == 1 && losses > 0 -> losses--; pend[pos] = 2 }
  :: atomic {
       pe > pos + 1 && pend[pos + 1] == 1 -> ident[IDM(ep, msg_of[pos + 1])] = pos + 2; pend[pos + 1] = 0 }
  :: atomic { pe > pos + 1 && pend[pos + 1] == 1 && losses > 0 -> losses--; pend[pos + 1] = 2 }
  :: atomic { crashes > 0 -> crashes--; goto crash }
  :: atomic {
#ifndef MUTANT_FRONTIER_BEFORE_IDENT
       /* R4: the finish waits for the page's identity writes ... */
       pend[pos] != 1 && (pe == pos + 1 || pend[pos + 1] != 1) ->
#else
       true ->
#endif
       if :: LT >= dl -> goto idle :: else -> skip fi;
       fence_check();
       if :: fail -> fail = false; goto idle :: else -> skip fi;
#ifndef MUTANT_FRONTIER_BEFORE_IDENT
       /* ... and a lost one fails the page: nothing moves, the page is begun again (after_failed_write
          looks for a newer owner first). */
       if
       :: pend[pos] == 2 || (pe > pos + 1 && pend[pos + 1] == 2) ->
          pend[pos] = 0; pend[pos + 1] = 0;
          after_failed_write();
          if :: fail -> fail = false; goto idle :: else -> goto work fi
       :: else -> skip
       fi;
#endif
       break }
  od;
  /* A pause may fall here: the checks passed, the frontier write not yet sent. (A crash here is the
     crash before the checks: the checks leave nothing behind.) */

frontier:
  atomic {
    /* P4 bookkeeping: a frontier write an owner starts after a higher epoch's first frontier landed. */
    if
    :: fenced_at[ep] -> stale_writes[ep]++;
       /* P4: a stale owner stops within its bound: at most FENCE_PAGES page writes. */
       assert(stale_writes[ep] <= FENCE_PAGES)
    :: else -> skip
    fi;
    if
    :: uncertain > 0 ->
       /* A frontier write that times out: landed or not, the worker cannot tell. */
       uncertain--;
       if
       :: write_frontier()
       :: skip
       fi;
       /* R8: the cache is dropped, a fence check looks for a newer owner, the worker reloads W from the
          store and drops the records it covers. */
       after_failed_write();
       if :: fail -> fail = false; goto idle :: else -> skip fi;
       top_epoch(t);
       if
       :: t > ep -> t = 0; goto idle      /* EpochAhead from lane_watermarks: the shard is gone */
       :: else -> skip
       fi;
       if :: t == ep && fr[t] > pos -> pos = fr[t] :: else -> skip fi;
       t = 0;
       settle_pending();
       goto work
    :: true ->
       write_frontier();
       pos = pe; pages++;
       settle_pending();
       goto work
    fi
  }

crash:
  atomic {
    /* The process is gone: its identity writes in flight land or are lost; the lease stays until it
       expires (or this node, restarted under the same id, takes it again at a higher epoch). */
    settle_pending();
    slow = false;
    goto idle
  }

stopped:
  skip
}


/* Once nothing can move (every fault spent, the clock at its end): heal as the fault tests do. Every
   lease has expired; one node takes the shard at the next epoch, starts at the highest frontier and
   materialises the rest of the log by the same rules, without faults; the client SYNCs once more. */
proctype Checker() {
  byte t, e, o, c, m;
  bool found;
end:
  timeout ->
  atomic {
    top_epoch(t);
    e = (l_epoch > t -> l_epoch : t) + 1;
    assert(e < EMAX);
    o = fr[t];
    do
    :: o < N ->
       if
       :: ident[IDM(e, msg_of[o])] == 0 -> ident[IDM(e, msg_of[o])] = o + 1; ent[IDX(e, o)] = true
       :: else -> skip   /* a repeat in this epoch: Existing, no entries */
       fi;
       fr[e] = o + 1;
       o++
    :: else -> break
    od;
    sync();
    /* P1: no acknowledged loss. The client, which followed the mailbox through every fault, has shown
       every message of the log ... */
    assert(shown[0] == 1 && shown[1] == 1);
    /* ... and a fresh reader (SYNC from 0) finds each of them. */
    m = 0;
    do
    :: m < NMSG ->
       found = false;
       c = 1;
       do
       :: c < EMAX ->
          o = 0;
          do
          :: o < N -> if :: msg_of[o] == m && VISIBLE(c, o, e) -> found = true :: else -> skip fi; o++
          :: else -> break
          od;
          c++
       :: else -> break
       od;
       assert(found);
       m++
    :: else -> break
    od
  }
}

init {
  atomic {
    msg_of[0] = 0; msg_of[1] = 1; msg_of[2] = 0;
    run Clock(); run Admin(); run Node(1); run Node(2); run Checker()
  }
}
