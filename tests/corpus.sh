#!/usr/bin/env bash
# The corpus suite: real checkpoint data of public repositories that use the reference
# implementation, read the way a teammate would, from a fresh clone with default settings.
#
#   tests/corpus.sh [DIR]    DIR holds bare repositories (default: ../shared/corpus)
#
# For each repository, in a fresh `git clone` of a copy (the corpus itself is never written):
# - every commit of main whose Entire-Checkpoint trailers name a checkpoint the repository holds
#   is shown by `show <commit>` (exit 0, each absent one beside it named on stderr), and every
#   commit whose trailers all dangle gives exit 3 "no checkpoint matches";
# - `doctor --json` lists exactly those dangling trailers (commit and ID) as `trailer-dangling`;
# - every checkpoint of its v1 branch, of the layouts the reference archived (the unsharded v1
#   ref, checkpoints v2) and its refs is listed (`list --remote`) and shown, and its
#   transcript read either works or is a clear error naming the checkpoint (blobs absent from
#   the snapshot), never a crash;
# - the conversation view of every session's transcript present (as a terminal's pager gets
#   `show --transcript`) exits 0 and accounts for every entry of it (tests/corpus_view.py);
# - `list main` lists exactly the commits of main that link checkpoints by the reference's trailer
#   rule, with the same IDs in the same order, and exits 0;
# - its figures are the corpus README's (commits of main, commits with trailers by the
#   reference's rule and by git's, commits whose every trailer names a checkpoint held here,
#   linked checkpoints held only in an archived layout, the v1 branch's checkpoints and commits);
# - a blobless clone (`--filter=blob:none`) lists `main`'s commits with the same checkpoints
#   found as the full clone;
# - `migrate` imports every checkpoint it holds (v1 branch, unsharded v1 ref, checkpoints v2)
#   into git-refs, and a second `migrate` finds them all up to date;
# - `blame` of every Go file of git-sync at main gives the attribution docs/blame.md reports;
# - `stats` of all of git-sync's main, compared with the reference's recorded attribution
#   (benches/stats_corpus.py), gives the `compared` row of docs/blame.md;
# - `blame` of every text file a linked commit touched, on every branch of every repository,
#   exits 0, and attributes to each agent format the lines docs/blame.md's table per agent says;
# - the token usage `session record` and a commit derive from a sample of each agent's
#   transcripts is the reference's (tests/corpus_tokens.py).
# Uses the debug binaries `cargo build` made (built here when missing), or those in the directory
# ENTIRE_CORPUS_BINS names (.ci/run: the release build, which reads transcripts several times
# faster). Prints how long each part took. Exit 1 on any failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$root/../shared/corpus}"
if [ ! -d "$dir" ]; then
    echo "corpus: no corpus at $dir" >&2
    exit 2
fi
dir="$(cd "$dir" && pwd)"
if [ -n "${ENTIRE_CORPUS_BINS:-}" ]; then
    bins="$(cd "$ENTIRE_CORPUS_BINS" && pwd)"
else
    bins="$root/target/debug"
    [ -x "$bins/git-entire-checkpoint" ] || (cd "$root" && cargo build --locked -q)
fi
[ -x "$bins/git-entire-checkpoint" ] || { echo "corpus: no git-entire-checkpoint in $bins" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Everything reads a writable copy of the corpus in which each repository has its refs/: a
# folder laid without its empty directories (as a copied corpus may be) leaves a repository with
# no loose ref without one, and git does not recognise it as a repository then.
cp -r "$dir" "$work/corpus"
chmod -R u+w "$work/corpus"
for repo in "$work/corpus"/*.git; do
    mkdir -p "$repo/refs/heads" "$repo/refs/tags"
done
dir="$work/corpus"
export HOME="$work/home" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C GIT_TERMINAL_PROMPT=0
export PATH="$bins:$PATH"
mkdir -p "$HOME"
git config --global user.name "Corpus Reader"
git config --global user.email "corpus@example.com"
git config --global init.defaultBranch main
unset ENTIRE_CHECKPOINTS_PRIMARY ENTIRE_CHECKPOINTS_MIRRORS

failures=0
# The corpus README's figures of each repository: commits of main; commits with trailers by the
# reference's rule, and by git's trailer parser; commits whose every trailer names a checkpoint
# held here; linked checkpoints held only in an archived layout (the unsharded v1 ref,
# checkpoints v2); checkpoints and commits of the v1 branch. (test-repo's are "see below" there:
# these are its own, its five v2-only checkpoints as the README says.)
figures() {
    case "$1" in
        git-sync) echo "527 402 402 348 0 381 793" ;;
        external-agents) echo "104 56 56 36 0 37 86" ;;
        test-repo) echo "57 21 21 19 5 59 108" ;;
        nimbus) echo "92 49 49 49 0 50 517" ;;
        chkit) echo "167 53 19 52 0 62 88" ;;
        medgemma-hackathon) echo "359 59 57 58 0 82 1057" ;;
        adrianmg-test-repo) echo "71 5 2 5 0 5 11" ;;
    esac
}
fail() {
    echo "corpus: FAIL: $*" >&2
    failures=$((failures + 1))
}

for src in "$dir"/*.git; do
    name="$(basename "$src" .git)"
    started=$SECONDS
    # A copy, so that nothing (not even a lock file) touches the corpus; then a clone of it.
    cp -r "$src" "$work/$name-origin.git"
    git clone -q "$work/$name-origin.git" "$work/$name"
    cd "$work/$name"
    origin="$work/$name-origin.git"

    # Where the reference kept checkpoints at <id[:2]>/<id[2:]>/: the v1 branch, the v1 store
    # as one unsharded ref, and the checkpoints-v2 documents.
    layouts="refs/heads/entire/checkpoints/v1 refs/entire/checkpoints/v1 refs/entire/checkpoints/v2/main"
    held() { # Whether the corpus repository holds checkpoint $1 (in a layout, or as a ref).
        local id="$1" ref
        for ref in $layouts; do
            git -C "$origin" cat-file -e "$ref:${id:0:2}/${id:2}/metadata.json" 2>/dev/null && return 0
        done
        [ -n "$(git -C "$origin" for-each-ref "refs/entire/checkpoints/${id: -2}/$id")" ]
    }

    # Each commit of main with the IDs it links by the reference's rule (docs/format.md,
    # "Trailers"): anywhere in the message, not only in git's trailer paragraph.
    git log -z --format=%H%x01%B main | python3 -c '
import re, sys
rule = re.compile(r"Entire-Checkpoint:[\t\n\x0c\r ]*([0-9a-f]{12}|[0-7][0-9ABCDEFGHJKMNPQRSTVWXYZ]{25})(?:[\t\n\x0c\r ]|$)")
for record in sys.stdin.read().split("\0"):
    sha, _, message = record.strip("\n").partition("\1")
    ids = list(dict.fromkeys(rule.findall(message)))
    if ids:
        print(sha, *ids)' >"$work/$name-links"

    linked=0 shown=0 dangling=0 not_found=0 all_held=0 archived_only=""
    while read -r commit ids; do
        held_ids=0 absent_ids=""
        for id in $ids; do
            if held "$id"; then
                held_ids=$((held_ids + 1))
                git -C "$origin" cat-file -e "refs/heads/entire/checkpoints/v1:${id:0:2}/${id:2}/metadata.json" 2>/dev/null ||
                    [ -n "$(git -C "$origin" for-each-ref "refs/entire/checkpoints/${id: -2}/$id")" ] ||
                    archived_only="$archived_only $id"
                continue
            fi
            absent_ids="$absent_ids $id"
            echo "$commit $id" >>"$work/$name-dangling"
        done
        set +e
        err="$(git entire-checkpoint show "$commit" --json 2>&1 >/dev/null)"
        rc=$?
        set -e
        if [ "$held_ids" -gt 0 ]; then
            # Every checkpoint that is held is shown; an absent one beside it is named.
            linked=$((linked + 1))
            named=1
            for id in $absent_ids; do [[ "$err" == *"no checkpoint matches \"$id\""* ]] || named=0; done
            [ -n "$absent_ids" ] || all_held=$((all_held + 1))
            if [ "$rc" = 0 ] && [ "$named" = 1 ]; then shown=$((shown + 1)); else fail "$name: show $commit exited $rc: $err"; fi
        else
            dangling=$((dangling + 1))
            if [ "$rc" = 3 ] && [[ "$err" == *"no checkpoint matches"* ]]; then
                not_found=$((not_found + 1))
            else
                fail "$name: dangling trailer of $commit: exit $rc: $err"
            fi
        fi
    done <"$work/$name-links"
    echo "corpus: $name: $shown of $linked linked commits shown; $not_found of $dangling commits whose trailers all dangle reported not found"

    # The README's figures.
    v1="refs/remotes/origin/entire/checkpoints/v1"
    measured="$(git rev-list --count main) $(wc -l <"$work/$name-links") \
$(git log --format='%(trailers:key=Entire-Checkpoint,valueonly,separator=%x2C)' main | grep -c . || true) \
$all_held $(echo $archived_only | tr ' ' '\n' | sort -u | grep -c . || true) \
$(git ls-tree -d -r --name-only "$v1" | awk -F/ 'NF == 2 && length($1) == 2' | wc -l) $(git rev-list --count "$v1")"
    measured="$(echo $measured)"
    if [ -z "$(figures "$name")" ]; then
        echo "corpus: $name: no figures to compare (add them to figures()): $measured"
    elif [ "$(figures "$name")" != "$measured" ]; then
        fail "$name: figures $measured, the README's $(figures "$name") (commits, with trailers, by git's rule, all held, archived only, v1 checkpoints, v1 commits)"
    else
        echo "corpus: $name: the README's figures: $measured"
    fi

    # doctor lists exactly the dangling trailers (commit and ID), with the remote reachable.
    set +e
    git entire-checkpoint doctor --json >"$work/doctor.json" 2>"$work/err"
    set -e
    doctor_dangling="$(python3 -c '
import json, re, subprocess, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    if f["code"] == "trailers-unverified":
        print("unverified: " + f["message"], file=sys.stderr)
    if f["code"] == "trailer-dangling":
        full = subprocess.check_output(["git", "rev-parse", f["subject"]], text=True).strip()
        print(full, re.search(r"links checkpoint (\S+),", f["message"]).group(1))' "$work/doctor.json" | sort)"
    expected_dangling="$(sort "$work/$name-dangling" 2>/dev/null || true)"
    if [ "$doctor_dangling" != "$expected_dangling" ]; then
        fail "$name: doctor's trailer-dangling findings differ from the dangling trailers: $(diff <(echo "$expected_dangling") <(echo "$doctor_dangling") | head -5 | tr '\n' ' ') $(head -3 "$work/err")"
    fi
    echo "corpus: $name: doctor lists $(echo -n "$doctor_dangling" | grep -c . || true) dangling trailers, as counted"

    # Every checkpoint the repository holds is listed, shown, and its transcript read cleanly.
    expected="$( (for ref in $layouts; do
            git -C "$origin" ls-tree -d --name-only -r "$ref" 2>/dev/null |
                awk -F/ 'NF == 2 && length($1) == 2 { print $1 $2 }'
        done
        # Checkpoint refs only: <shard>/<id> whose shard is the ID's last two characters.
        git -C "$origin" for-each-ref --format='%(refname)' refs/entire/checkpoints/ |
            awk -F/ 'NF == 5 && $4 == substr($5, length($5) - 1) { print $5 }') | sort -u)"
    listed="$(git entire-checkpoint list --remote --json | python3 -c '
import json, sys
for e in json.load(sys.stdin):
    print(e["checkpoint_id"])' | sort -u)"
    if [ "$expected" != "$listed" ]; then
        fail "$name: list --remote differs from what the repository holds: $(diff <(echo "$expected") <(echo "$listed") | head -5 | tr '\n' ' ')"
    fi
    read_ok=0 read_absent=0
    for id in $expected; do
        set +e
        git entire-checkpoint show "$id" --json >/dev/null 2>"$work/err"
        rc=$?
        git entire-checkpoint show "$id" --transcript >/dev/null 2>"$work/terr"
        trc=$?
        set -e
        [ "$rc" = 0 ] || fail "$name: show $id exited $rc: $(cat "$work/err")"
        if [ "$trc" = 0 ]; then
            read_ok=$((read_ok + 1))
        elif [ "$trc" = 1 ] && grep -q "$id" "$work/terr"; then
            read_absent=$((read_absent + 1))
        else
            fail "$name: show $id --transcript exited $trc: $(cat "$work/terr")"
        fi
    done
    echo "corpus: $name: $(echo "$expected" | wc -w) checkpoints listed and shown; transcripts: $read_ok read, $read_absent absent from the snapshot (clear error)"

    # The conversation view of every transcript present: exit 0, every entry accounted for.
    view_started=$SECONDS
    python3 "$root/tests/corpus_view.py" "$origin" "$name" ||
        fail "$name: view: some transcripts' conversation view failed or left entries out"
    echo "corpus: $name: view checked in $((SECONDS - view_started)) s"

    # `list main`: every commit with a trailer is listed, the dangling ones as not found, and
    # nothing fails (absent transcript blobs do not matter to a list line).
    with_trailers="$(wc -l <"$work/$name-links")"
    set +e
    git entire-checkpoint list main --json >"$work/range.json" 2>"$work/err"
    rc=$?
    set -e
    if [ "$rc" != 0 ]; then
        fail "$name: list main exited $rc: $(tail -3 "$work/err")"
    else
        # The same commits, in the same order, with the same IDs in the same order.
        python3 -c '
import json, sys
for c in json.load(open(sys.argv[1]))["commits"]:
    print(c["commit"], *[cp["checkpoint_id"] for cp in c["checkpoints"]])' "$work/range.json" >"$work/listed"
        listed_commits="$(wc -l <"$work/listed")"
        cmp -s "$work/listed" "$work/$name-links" ||
            fail "$name: list main lists $listed_commits commits, $with_trailers carry trailers: $(diff "$work/$name-links" "$work/listed" | head -5 | tr '\n' ' ')"
        echo "corpus: $name: list main lists the $listed_commits commits with trailers, with their IDs in order"
    fi

    # A blobless clone (`git clone --filter=blob:none`, served as forges serve it) lists the
    # same commits with the same checkpoints found as this full clone: what a read needs is
    # fetched by ID from the promisor remote.
    git -C "$origin" config uploadpack.allowFilter true
    git clone -q --filter=blob:none "file://$origin" "$work/$name-blobless"
    set +e
    (cd "$work/$name-blobless" && git entire-checkpoint list main --json) >"$work/blobless.json" 2>"$work/err"
    rc=$?
    set -e
    found() {
        python3 -c '
import json, sys
for c in json.load(open(sys.argv[1]))["commits"]:
    print(c["commit"], *["%s:%s" % (cp["checkpoint_id"], cp.get("found")) for cp in c["checkpoints"]])' "$1"
    }
    if [ "$rc" != 0 ]; then
        fail "$name: list main in a blobless clone exited $rc: $(tail -3 "$work/err")"
    elif [ -s "$work/range.json" ] && [ "$(found "$work/range.json")" != "$(found "$work/blobless.json")" ]; then
        fail "$name: a blobless clone lists other checkpoints than a full one: $(diff <(found "$work/range.json") <(found "$work/blobless.json") | head -5 | tr '\n' ' ')"
    else
        echo "corpus: $name: a blobless clone lists the $(found "$work/blobless.json" | grep -o ':True' | wc -l) linked checkpoints found in a full one"
    fi
    rm -rf "$work/$name-blobless"

    # migrate imports every checkpoint held here into git-refs; a second finds them up to date.
    set +e
    git entire-checkpoint migrate --json >"$work/migrate.json" 2>"$work/err"
    rc=$?
    git entire-checkpoint migrate --json >"$work/migrate2.json" 2>>"$work/err"
    rc2=$?
    set -e
    if [ "$rc" != 0 ] || [ "$rc2" != 0 ]; then
        fail "$name: migrate exited $rc, then $rc2: $(tail -3 "$work/err")"
    else
        missing=""
        for id in $expected; do
            [ -n "$(git for-each-ref "refs/entire/checkpoints/${id: -2}/$id")" ] || missing="$missing $id"
        done
        [ -z "$missing" ] || fail "$name: migrate left out$missing"
        again="$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(len(d["migrated"]), len(d["up_to_date"]))' "$work/migrate2.json")"
        [ "${again%% *}" = 0 ] || fail "$name: a second migrate migrated again: $again"
        echo "corpus: $name: migrate: $(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(", ".join("%d from %s (%d raw transcripts)" % (len(s["migrated"]), s["layout"], len(s.get("transcripts", []))) for s in d["sources"]))' "$work/migrate.json"); then ${again#* } up to date"
    fi
    echo "corpus: $name: checked in $((SECONDS - started)) s"
    cd "$work"
done

# blame over git-sync's Go files: the attribution docs/blame.md reports, and no file failing.
if [ -d "$dir/git-sync.git" ]; then
    started=$SECONDS
    out="$(python3 "$root/benches/blame_corpus.py" "$dir" --bin "$bins/git-entire-checkpoint")"
    echo "$out" | sed 's/^/corpus: blame: /'
    if echo "$out" | grep -q "files that failed"; then
        fail "blame: some files failed"
    fi
    for label in agent commit-linked human; do
        documented="$(sed -n "s/^| $label | \([0-9,]*\) |.*/\1/p" "$root/docs/blame.md" | tr -d ,)"
        measured="$(echo "$out" | awk -v k="${label/-/_}" '$1 == k {print $2}')"
        [ -n "$documented" ] && [ "$documented" = "$measured" ] ||
            fail "blame: $measured $label lines, docs/blame.md says ${documented:-nothing}"
    done
    echo "corpus: blame: checked in $((SECONDS - started)) s"
fi

# stats over git-sync's history against the reference's recorded attribution: the `compared`
# row of docs/blame.md ("`stats`: the share computed against the share the reference recorded").
if [ -d "$dir/git-sync.git" ]; then
    started=$SECONDS
    out="$(python3 "$root/benches/stats_corpus.py" "$dir" --bin "$bins/git-entire-checkpoint")"
    echo "$out" | sed 's/^/corpus: stats: /'
    documented="$(sed -n 's/^| compared | \([0-9,]*\) | \([0-9,]*\) | \([0-9,]*\) |.*/\1 \2 \3/p' "$root/docs/blame.md" | tr -d ,)"
    measured="$(echo "$out" | sed -n 's/^compared (.*): \([0-9]*\) commits$/\1/p') $(echo "$out" | sed -n 's/^  stats: *\([0-9]*\) agent lines of \([0-9]*\) added.*/\2 \1/p')"
    [ -n "$documented" ] && [ "$documented" = "$measured" ] ||
        fail "stats: measured $measured (commits, added, agent), docs/blame.md says ${documented:-nothing}"
    echo "corpus: stats: checked in $((SECONDS - started)) s"
fi

# Token usage derived from the transcripts: the reference's figures, for a sample of each agent's
# sessions of each repository (tests/corpus_tokens.py says how they are compared).
mkdir -p "$work/tokens"
started=$SECONDS
python3 "$root/tests/corpus_tokens.py" "$dir" "$work/tokens" 25 ||
    fail "tokens: some sessions' token usage differs from the reference's"
echo "corpus: tokens: checked in $((SECONDS - started)) s"

# blame over every repository: every text file a linked commit touched, on every branch, exits 0,
# and each agent format's figures are docs/blame.md's table per agent ("Every agent, measured").
started=$SECONDS
out="$(python3 "$root/benches/blame_corpus.py" "$dir" --agents --bin "$bins/git-entire-checkpoint")"
echo "$out" | sed 's/^/corpus: blame --agents: /'
if echo "$out" | grep -q "^failed: "; then
    fail "blame: some files did not exit 0"
fi
measured="$(echo "$out" | grep '^format ' | sort)"
documented="$(sed -n 's/^| `\([a-z()_-]*\)` | \([0-9,]*\) | \([0-9,]*\) | \([0-9,]*\) | \([0-9,]*\) |$/format \1 sessions \2 read \3 writing \4 agent_lines \5/p' "$root/docs/blame.md" | tr -d , | sort)"
[ "$measured" = "$documented" ] ||
    fail "blame --agents: the figures per agent differ from docs/blame.md: $(diff <(echo "$documented") <(echo "$measured") | tr '\n' ' ')"
echo "corpus: blame --agents: checked in $((SECONDS - started)) s"

if [ "$failures" -gt 0 ]; then
    echo "corpus: $failures failure(s)" >&2
    exit 1
fi
echo "corpus: all checks passed"
