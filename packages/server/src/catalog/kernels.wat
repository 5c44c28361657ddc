;; The bitset kernels of the storefront index (bitsets.ts), in WebAssembly with 128-bit SIMD: the
;; word loops a search spends its time in, four 32-bit words per instruction where V8 compiles the
;; same loop in JavaScript to one word at a time with a bounds check per access.
;; `pnpm generate` assembles this file into generated/kernels.gen.ts (scripts/generate-kernels.ts);
;; CI fails when that file is stale.
;;
;; Contract: every address is a byte offset into the imported memory, a multiple of 4 (blocks start
;; on 64 bytes; a digit bitset inside a block may not be 16-byte aligned, which vector loads allow
;; at some cost); `words` is a count of 32-bit words. Each function reads and writes exactly `words` words from each address
;; (a scalar loop takes the last words that do not fill a vector), but next3 and prev3, which stop at
;; the first word they look for. Nothing here allocates.
(module
  (import "env" "memory" (memory 1 65536 shared))

  ;; into[i] = ((into[i] & (from[i] ^ flip)) & ~orAll) | ((into[i] | from[i]) & orAll):
  ;; AND (flip 0, orAll 0), AND NOT (flip -1, orAll 0) or OR (orAll -1), in one loop.
  (func (export "combine") (param $into i32) (param $from i32) (param $words i32) (param $flip i32) (param $orAll i32)
    (local $vend i32) (local $end i32) (local $a v128) (local $b v128) (local $vflip v128) (local $vor v128)
    (local.set $vend (i32.add (local.get $into) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (local.set $end (i32.add (local.get $into) (i32.shl (local.get $words) (i32.const 2))))
    (local.set $vflip (i32x4.splat (local.get $flip)))
    (local.set $vor (i32x4.splat (local.get $orAll)))
    (block $vectorsDone
      (loop $vectors
        (br_if $vectorsDone (i32.ge_u (local.get $into) (local.get $vend)))
        (local.set $a (v128.load (local.get $into)))
        (local.set $b (v128.load (local.get $from)))
        (v128.store (local.get $into)
          (v128.bitselect (v128.or (local.get $a) (local.get $b)) (v128.and (local.get $a) (v128.xor (local.get $b) (local.get $vflip))) (local.get $vor)))
        (local.set $into (i32.add (local.get $into) (i32.const 16)))
        (local.set $from (i32.add (local.get $from) (i32.const 16)))
        (br $vectors)))
    (block $wordsDone
      (loop $tail
        (br_if $wordsDone (i32.ge_u (local.get $into) (local.get $end)))
        (i32.store (local.get $into)
          (i32.or
            (i32.and (i32.or (i32.load (local.get $into)) (i32.load (local.get $from))) (local.get $orAll))
            (i32.and
              (i32.and (i32.load (local.get $into)) (i32.xor (i32.load (local.get $from)) (local.get $flip)))
              (i32.xor (local.get $orAll) (i32.const -1)))))
        (local.set $into (i32.add (local.get $into) (i32.const 4)))
        (local.set $from (i32.add (local.get $from) (i32.const 4)))
        (br $tail))))

  ;; into[i] = start[i] & a[i] & b[i] & c[i], where start is into, or a itself when `fresh` is 1
  ;; (ANDing it twice changes nothing, and into is then not read); returns the number of set bits of
  ;; the result, counted as it is written (as in popcount). An AND of fewer sources passes one
  ;; twice; of more, calls again.
  (func (export "and3") (param $into i32) (param $a i32) (param $b i32) (param $c i32) (param $words i32) (param $fresh i32) (result i32)
    (local $start i32) (local $vend i32) (local $end i32) (local $bend i32) (local $v v128) (local $bytes v128) (local $sum v128) (local $w i32) (local $total i32)
    (local.set $start (select (local.get $a) (local.get $into) (local.get $fresh)))
    (local.set $vend (i32.add (local.get $into) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (local.set $end (i32.add (local.get $into) (i32.shl (local.get $words) (i32.const 2))))
    (block $vectorsDone
      (loop $blocks
        (br_if $vectorsDone (i32.ge_u (local.get $into) (local.get $vend)))
        (local.set $bend (select (i32.add (local.get $into) (i32.const 496)) (local.get $vend) (i32.lt_u (i32.add (local.get $into) (i32.const 496)) (local.get $vend))))
        (local.set $bytes (v128.const i32x4 0 0 0 0))
        (loop $vectors
          (local.set $v
            (v128.and
              (v128.and (v128.load (local.get $a)) (v128.load (local.get $b)))
              (v128.and (v128.load (local.get $c)) (v128.load (local.get $start)))))
          (v128.store (local.get $into) (local.get $v))
          (local.set $bytes (i8x16.add (local.get $bytes) (i8x16.popcnt (local.get $v))))
          (local.set $into (i32.add (local.get $into) (i32.const 16)))
          (local.set $start (i32.add (local.get $start) (i32.const 16)))
          (local.set $a (i32.add (local.get $a) (i32.const 16)))
          (local.set $b (i32.add (local.get $b) (i32.const 16)))
          (local.set $c (i32.add (local.get $c) (i32.const 16)))
          (br_if $vectors (i32.lt_u (local.get $into) (local.get $bend))))
        (local.set $sum (i32x4.add (local.get $sum) (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $bytes)))))
        (br $blocks)))
    (local.set $total
      (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
        (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
    (block $wordsDone
      (loop $tail
        (br_if $wordsDone (i32.ge_u (local.get $into) (local.get $end)))
        (local.set $w
          (i32.and
            (i32.and (i32.load (local.get $a)) (i32.load (local.get $b)))
            (i32.and (i32.load (local.get $c)) (i32.load (local.get $start)))))
        (i32.store (local.get $into) (local.get $w))
        (local.set $total (i32.add (local.get $total) (i32.popcnt (local.get $w))))
        (local.set $into (i32.add (local.get $into) (i32.const 4)))
        (local.set $start (i32.add (local.get $start) (i32.const 4)))
        (local.set $a (i32.add (local.get $a) (i32.const 4)))
        (local.set $b (i32.add (local.get $b) (i32.const 4)))
        (local.set $c (i32.add (local.get $c) (i32.const 4)))
        (br $tail)))
    (local.get $total))

  ;; The number of slots set in all of a, b and c, each read flipped where its flip is -1
  ;; ((a[i] ^ fa) & (b[i] ^ fb) & (c[i] ^ fc): a source flipped stands for the slots it does not
  ;; hold), written nowhere: an AND that is only counted and then read a few words at a time needs
  ;; no result to be stored. Fewer sources pass one twice.
  (func (export "count3") (param $a i32) (param $b i32) (param $c i32) (param $words i32) (param $fa i32) (param $fb i32) (param $fc i32) (result i32)
    (local $vend i32) (local $end i32) (local $bend i32) (local $bytes v128) (local $sum v128) (local $total i32)
    (local $va v128) (local $vb v128) (local $vc v128)
    (local.set $va (i32x4.splat (local.get $fa)))
    (local.set $vb (i32x4.splat (local.get $fb)))
    (local.set $vc (i32x4.splat (local.get $fc)))
    (local.set $vend (i32.add (local.get $a) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (local.set $end (i32.add (local.get $a) (i32.shl (local.get $words) (i32.const 2))))
    (block $vectorsDone
      (loop $blocks
        (br_if $vectorsDone (i32.ge_u (local.get $a) (local.get $vend)))
        (local.set $bend (select (i32.add (local.get $a) (i32.const 496)) (local.get $vend) (i32.lt_u (i32.add (local.get $a) (i32.const 496)) (local.get $vend))))
        (local.set $bytes (v128.const i32x4 0 0 0 0))
        (loop $vectors
          (local.set $bytes
            (i8x16.add (local.get $bytes)
              (i8x16.popcnt
                (v128.and
                  (v128.and (v128.xor (v128.load (local.get $a)) (local.get $va)) (v128.xor (v128.load (local.get $b)) (local.get $vb)))
                  (v128.xor (v128.load (local.get $c)) (local.get $vc))))))
          (local.set $a (i32.add (local.get $a) (i32.const 16)))
          (local.set $b (i32.add (local.get $b) (i32.const 16)))
          (local.set $c (i32.add (local.get $c) (i32.const 16)))
          (br_if $vectors (i32.lt_u (local.get $a) (local.get $bend))))
        (local.set $sum (i32x4.add (local.get $sum) (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $bytes)))))
        (br $blocks)))
    (local.set $total
      (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
        (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
    (block $wordsDone
      (loop $tail
        (br_if $wordsDone (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $total
          (i32.add (local.get $total)
            (i32.popcnt
              (i32.and
                (i32.and (i32.xor (i32.load (local.get $a)) (local.get $fa)) (i32.xor (i32.load (local.get $b)) (local.get $fb)))
                (i32.xor (i32.load (local.get $c)) (local.get $fc))))))
        (local.set $a (i32.add (local.get $a) (i32.const 4)))
        (local.set $b (i32.add (local.get $b) (i32.const 4)))
        (local.set $c (i32.add (local.get $c) (i32.const 4)))
        (br $tail)))
    (local.get $total))

  ;; The first word at or after `from` (and before `words`) where a ^ fa, b ^ fb and c ^ fc share a
  ;; set bit; `words` when there is none. Reads only the words it passes.
  (func (export "next3") (param $a i32) (param $b i32) (param $c i32) (param $words i32) (param $fa i32) (param $fb i32) (param $fc i32) (param $from i32) (result i32)
    (local $va v128) (local $vb v128) (local $vc v128) (local $off i32)
    (local.set $va (i32x4.splat (local.get $fa)))
    (local.set $vb (i32x4.splat (local.get $fb)))
    (local.set $vc (i32x4.splat (local.get $fc)))
    (block $vectorsDone
      (loop $vectors
        (br_if $vectorsDone (i32.gt_u (i32.add (local.get $from) (i32.const 4)) (local.get $words)))
        (local.set $off (i32.shl (local.get $from) (i32.const 2)))
        (br_if $vectorsDone
          (v128.any_true
            (v128.and
              (v128.and
                (v128.xor (v128.load (i32.add (local.get $a) (local.get $off))) (local.get $va))
                (v128.xor (v128.load (i32.add (local.get $b) (local.get $off))) (local.get $vb)))
              (v128.xor (v128.load (i32.add (local.get $c) (local.get $off))) (local.get $vc)))))
        (local.set $from (i32.add (local.get $from) (i32.const 4)))
        (br $vectors)))
    ;; The word within the four found, or among the last words that do not fill a vector.
    (block $found
      (loop $words
        (br_if $found (i32.ge_u (local.get $from) (local.get $words)))
        (local.set $off (i32.shl (local.get $from) (i32.const 2)))
        (br_if $found
          (i32.and
            (i32.and
              (i32.xor (i32.load (i32.add (local.get $a) (local.get $off))) (local.get $fa))
              (i32.xor (i32.load (i32.add (local.get $b) (local.get $off))) (local.get $fb)))
            (i32.xor (i32.load (i32.add (local.get $c) (local.get $off))) (local.get $fc))))
        (local.set $from (i32.add (local.get $from) (i32.const 1)))
        (br $words)))
    (local.get $from))

  ;; The last word before `before` where a ^ fa, b ^ fb and c ^ fc share a set bit; -1 when there
  ;; is none. Reads only the words it passes.
  (func (export "prev3") (param $a i32) (param $b i32) (param $c i32) (param $fa i32) (param $fb i32) (param $fc i32) (param $before i32) (result i32)
    (local $va v128) (local $vb v128) (local $vc v128) (local $off i32)
    (local.set $va (i32x4.splat (local.get $fa)))
    (local.set $vb (i32x4.splat (local.get $fb)))
    (local.set $vc (i32x4.splat (local.get $fc)))
    (block $vectorsDone
      (loop $vectors
        (br_if $vectorsDone (i32.lt_s (local.get $before) (i32.const 4)))
        (local.set $off (i32.shl (i32.sub (local.get $before) (i32.const 4)) (i32.const 2)))
        (br_if $vectorsDone
          (v128.any_true
            (v128.and
              (v128.and
                (v128.xor (v128.load (i32.add (local.get $a) (local.get $off))) (local.get $va))
                (v128.xor (v128.load (i32.add (local.get $b) (local.get $off))) (local.get $vb)))
              (v128.xor (v128.load (i32.add (local.get $c) (local.get $off))) (local.get $vc)))))
        (local.set $before (i32.sub (local.get $before) (i32.const 4)))
        (br $vectors)))
    ;; The word within the four found, or among the first words that do not fill a vector.
    (block $found
      (loop $words
        (local.set $before (i32.sub (local.get $before) (i32.const 1)))
        (br_if $found (i32.lt_s (local.get $before) (i32.const 0)))
        (local.set $off (i32.shl (local.get $before) (i32.const 2)))
        (br_if $found
          (i32.and
            (i32.and
              (i32.xor (i32.load (i32.add (local.get $a) (local.get $off))) (local.get $fa))
              (i32.xor (i32.load (i32.add (local.get $b) (local.get $off))) (local.get $fb)))
            (i32.xor (i32.load (i32.add (local.get $c) (local.get $off))) (local.get $fc))))
        (br $words)))
    (local.get $before))

  ;; Every byte of the words set to `byte` (0 or 255): a TypedArray's fill on shared memory writes
  ;; element by element (relaxed atomics), several times slower than this memset.
  (func (export "fill") (param $bits i32) (param $words i32) (param $byte i32)
    (memory.fill (local.get $bits) (local.get $byte) (i32.shl (local.get $words) (i32.const 2))))

  ;; into[i] = from[i] (memmove), for the same reason.
  (func (export "copy") (param $into i32) (param $from i32) (param $words i32)
    (memory.copy (local.get $into) (local.get $from) (i32.shl (local.get $words) (i32.const 2))))

  ;; bits[i] = ~bits[i]
  (func (export "invert") (param $bits i32) (param $words i32)
    (local $vend i32) (local $end i32)
    (local.set $vend (i32.add (local.get $bits) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (local.set $end (i32.add (local.get $bits) (i32.shl (local.get $words) (i32.const 2))))
    (block $vectorsDone
      (loop $vectors
        (br_if $vectorsDone (i32.ge_u (local.get $bits) (local.get $vend)))
        (v128.store (local.get $bits) (v128.not (v128.load (local.get $bits))))
        (local.set $bits (i32.add (local.get $bits) (i32.const 16)))
        (br $vectors)))
    (block $wordsDone
      (loop $tail
        (br_if $wordsDone (i32.ge_u (local.get $bits) (local.get $end)))
        (i32.store (local.get $bits) (i32.xor (i32.load (local.get $bits)) (i32.const -1)))
        (local.set $bits (i32.add (local.get $bits) (i32.const 4)))
        (br $tail))))

  ;; The number of set bits. Each byte's count is added into a byte accumulator for up to 31 vectors
  ;; (at most 8 × 31 = 248 a lane), which is then widened and summed into 32-bit lanes: two widening
  ;; steps per 31 vectors instead of per vector. No 32-bit lane can overflow below 2^27 vectors.
  (func (export "popcount") (param $bits i32) (param $words i32) (result i32)
    (local $vend i32) (local $end i32) (local $bend i32) (local $bytes v128) (local $sum v128) (local $total i32)
    (local.set $vend (i32.add (local.get $bits) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (local.set $end (i32.add (local.get $bits) (i32.shl (local.get $words) (i32.const 2))))
    (block $vectorsDone
      (loop $blocks
        (br_if $vectorsDone (i32.ge_u (local.get $bits) (local.get $vend)))
        (local.set $bend (select (i32.add (local.get $bits) (i32.const 496)) (local.get $vend) (i32.lt_u (i32.add (local.get $bits) (i32.const 496)) (local.get $vend))))
        (local.set $bytes (v128.const i32x4 0 0 0 0))
        (loop $vectors
          (local.set $bytes (i8x16.add (local.get $bytes) (i8x16.popcnt (v128.load (local.get $bits)))))
          (local.set $bits (i32.add (local.get $bits) (i32.const 16)))
          (br_if $vectors (i32.lt_u (local.get $bits) (local.get $bend))))
        (local.set $sum (i32x4.add (local.get $sum) (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $bytes)))))
        (br $blocks)))
    (local.set $total
      (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
        (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
    (block $wordsDone
      (loop $tail
        (br_if $wordsDone (i32.ge_u (local.get $bits) (local.get $end)))
        (local.set $total (i32.add (local.get $total) (i32.popcnt (i32.load (local.get $bits)))))
        (local.set $bits (i32.add (local.get $bits) (i32.const 4)))
        (br $tail)))
    (local.get $total))

  ;; 1 when any of the words is set, else 0.
  (func (export "any") (param $bits i32) (param $words i32) (result i32)
    (local $vend i32) (local $end i32)
    (local.set $vend (i32.add (local.get $bits) (i32.shl (i32.and (local.get $words) (i32.const -4)) (i32.const 2))))
    (local.set $end (i32.add (local.get $bits) (i32.shl (local.get $words) (i32.const 2))))
    (block $vectorsDone
      (loop $vectors
        (br_if $vectorsDone (i32.ge_u (local.get $bits) (local.get $vend)))
        (if (v128.any_true (v128.load (local.get $bits))) (then (return (i32.const 1))))
        (local.set $bits (i32.add (local.get $bits) (i32.const 16)))
        (br $vectors)))
    (block $wordsDone
      (loop $tail
        (br_if $wordsDone (i32.ge_u (local.get $bits) (local.get $end)))
        (if (i32.load (local.get $bits)) (then (return (i32.const 1))))
        (local.set $bits (i32.add (local.get $bits) (i32.const 4)))
        (br $tail)))
    (i32.const 0))

  ;; Notes the non-zero lanes of `members` (words `word` to `word + 3`) at memberWords[noted ..],
  ;; memberBits[noted ..]; returns the new count.
  (func $note (param $members v128) (param $word i32) (param $memberWords i32) (param $memberBits i32) (param $noted i32) (result i32)
    (local $m i32)
    (local.set $m (i32x4.extract_lane 0 (local.get $members)))
    (if (local.get $m) (then
      (i32.store (i32.add (local.get $memberWords) (i32.shl (local.get $noted) (i32.const 2))) (local.get $word))
      (i32.store (i32.add (local.get $memberBits) (i32.shl (local.get $noted) (i32.const 2))) (local.get $m))
      (local.set $noted (i32.add (local.get $noted) (i32.const 1)))))
    (local.set $m (i32x4.extract_lane 1 (local.get $members)))
    (if (local.get $m) (then
      (i32.store (i32.add (local.get $memberWords) (i32.shl (local.get $noted) (i32.const 2))) (i32.add (local.get $word) (i32.const 1)))
      (i32.store (i32.add (local.get $memberBits) (i32.shl (local.get $noted) (i32.const 2))) (local.get $m))
      (local.set $noted (i32.add (local.get $noted) (i32.const 1)))))
    (local.set $m (i32x4.extract_lane 2 (local.get $members)))
    (if (local.get $m) (then
      (i32.store (i32.add (local.get $memberWords) (i32.shl (local.get $noted) (i32.const 2))) (i32.add (local.get $word) (i32.const 2)))
      (i32.store (i32.add (local.get $memberBits) (i32.shl (local.get $noted) (i32.const 2))) (local.get $m))
      (local.set $noted (i32.add (local.get $noted) (i32.const 1)))))
    (local.set $m (i32x4.extract_lane 3 (local.get $members)))
    (if (local.get $m) (then
      (i32.store (i32.add (local.get $memberWords) (i32.shl (local.get $noted) (i32.const 2))) (i32.add (local.get $word) (i32.const 3)))
      (i32.store (i32.add (local.get $memberBits) (i32.shl (local.get $noted) (i32.const 2))) (local.get $m))
      (local.set $noted (i32.add (local.get $noted) (i32.const 1)))))
    (local.get $noted))

  ;; A range leaf's pass (bitsets.ts, narrowAround and narrowByDigits): from the value bucket's "under" bitsets, or from
  ;; its six digit bitsets when `digits` is 1 (then `under` is the high-below bitset, `next` the
  ;; high-through one and `mb` to `lt` the others). Keeps in `result` the slots below the bucket when
  ;; `below` is -1 (above it when 0) and its members where `membersAll` is -1; with `note` 1, notes
  ;; the words holding members (memberWords, memberBits) and returns their number. `masks` holds
  ;; the digits' masks: hbMask, htAll, mbMask, mtAll, lbMask, ltAll (or, for "under" bitsets, only
  ;; htAll: -1 when there is no next bucket). With `fresh` 1, `result` is read as all ones whatever it
  ;; holds (a leaf's own new bitset: no fill before the pass).
  (func (export "narrow")
    (param $result i32) (param $words i32) (param $digits i32)
    (param $hb i32) (param $ht i32) (param $mb i32) (param $mt i32) (param $lb i32) (param $lt i32)
    (param $masks i32) (param $below i32) (param $membersAll i32) (param $note i32)
    (param $memberWords i32) (param $memberBits i32) (param $fresh i32) (result i32)
    (local $vend i32) (local $word i32) (local $noted i32)
    (local $hbMask v128) (local $htAll v128) (local $mbMask v128) (local $mtAll v128) (local $lbMask v128) (local $ltAll v128)
    (local $vbelow v128) (local $vmembers v128) (local $vfresh v128)
    (local $had v128) (local $under v128) (local $same v128) (local $members v128) (local $highSame v128) (local $middleSame v128) (local $lbv v128)
    (local.set $hbMask (v128.load32_splat (local.get $masks)))
    (local.set $htAll (v128.load32_splat offset=4 (local.get $masks)))
    (local.set $mbMask (v128.load32_splat offset=8 (local.get $masks)))
    (local.set $mtAll (v128.load32_splat offset=12 (local.get $masks)))
    (local.set $lbMask (v128.load32_splat offset=16 (local.get $masks)))
    (local.set $ltAll (v128.load32_splat offset=20 (local.get $masks)))
    (local.set $vbelow (i32x4.splat (local.get $below)))
    (local.set $vmembers (i32x4.splat (local.get $membersAll)))
    (local.set $vfresh (i32x4.splat (i32.sub (i32.const 0) (local.get $fresh))))
    ;; Whole vectors: one loop per source of the bucket's bitsets, with no branch but the rare
    ;; members' note; then the last words one at a time.
    (local.set $vend (i32.and (local.get $words) (i32.const -4)))
    (if (local.get $digits)
      (then
        (block $digitsDone
          (loop $digitVectors
            (br_if $digitsDone (i32.ge_u (local.get $word) (local.get $vend)))
            (local.set $had (v128.or (v128.load (local.get $result)) (local.get $vfresh)))
            (local.set $highSame (v128.andnot (v128.or (v128.load (local.get $ht)) (local.get $htAll)) (v128.and (v128.load (local.get $hb)) (local.get $hbMask))))
            (local.set $middleSame (v128.andnot (v128.or (v128.load (local.get $mt)) (local.get $mtAll)) (v128.and (v128.load (local.get $mb)) (local.get $mbMask))))
            (local.set $lbv (v128.and (v128.load (local.get $lb)) (local.get $lbMask)))
            (local.set $under
              (v128.or (v128.and (v128.load (local.get $hb)) (local.get $hbMask))
                (v128.and (local.get $highSame)
                  (v128.or (v128.and (v128.load (local.get $mb)) (local.get $mbMask)) (v128.and (local.get $middleSame) (local.get $lbv))))))
            (local.set $same
              (v128.andnot
                (v128.and (v128.and (local.get $highSame) (local.get $middleSame)) (v128.or (v128.load (local.get $lt)) (local.get $ltAll)))
                (local.get $lbv)))
            (local.set $members (v128.and (local.get $had) (local.get $same)))
            (v128.store (local.get $result)
              (v128.or
                (v128.and (local.get $had)
                  (v128.or (v128.and (local.get $under) (local.get $vbelow)) (v128.andnot (v128.not (v128.or (local.get $under) (local.get $same))) (local.get $vbelow))))
                (v128.and (local.get $members) (local.get $vmembers))))
            (if (i32.and (local.get $note) (v128.any_true (local.get $members)))
              (then (local.set $noted (call $note (local.get $members) (local.get $word) (local.get $memberWords) (local.get $memberBits) (local.get $noted)))))
            (local.set $word (i32.add (local.get $word) (i32.const 4)))
            (local.set $result (i32.add (local.get $result) (i32.const 16)))
            (local.set $hb (i32.add (local.get $hb) (i32.const 16)))
            (local.set $ht (i32.add (local.get $ht) (i32.const 16)))
            (local.set $mb (i32.add (local.get $mb) (i32.const 16)))
            (local.set $mt (i32.add (local.get $mt) (i32.const 16)))
            (local.set $lb (i32.add (local.get $lb) (i32.const 16)))
            (local.set $lt (i32.add (local.get $lt) (i32.const 16)))
            (br $digitVectors))))
      (else
        (block $underDone
          (loop $underVectors
            (br_if $underDone (i32.ge_u (local.get $word) (local.get $vend)))
            (local.set $had (v128.or (v128.load (local.get $result)) (local.get $vfresh)))
            (local.set $under (v128.load (local.get $hb)))
            (local.set $same (v128.andnot (v128.or (v128.load (local.get $ht)) (local.get $htAll)) (local.get $under)))
            (local.set $members (v128.and (local.get $had) (local.get $same)))
            (v128.store (local.get $result)
              (v128.or
                (v128.and (local.get $had)
                  (v128.or (v128.and (local.get $under) (local.get $vbelow)) (v128.andnot (v128.not (v128.or (local.get $under) (local.get $same))) (local.get $vbelow))))
                (v128.and (local.get $members) (local.get $vmembers))))
            (if (i32.and (local.get $note) (v128.any_true (local.get $members)))
              (then (local.set $noted (call $note (local.get $members) (local.get $word) (local.get $memberWords) (local.get $memberBits) (local.get $noted)))))
            (local.set $word (i32.add (local.get $word) (i32.const 4)))
            (local.set $result (i32.add (local.get $result) (i32.const 16)))
            (local.set $hb (i32.add (local.get $hb) (i32.const 16)))
            (local.set $ht (i32.add (local.get $ht) (i32.const 16)))
            (local.set $mb (i32.add (local.get $mb) (i32.const 16)))
            (local.set $mt (i32.add (local.get $mt) (i32.const 16)))
            (local.set $lb (i32.add (local.get $lb) (i32.const 16)))
            (local.set $lt (i32.add (local.get $lt) (i32.const 16)))
            (br $underVectors)))))
    (block $done
      (loop $words
        (br_if $done (i32.ge_u (local.get $word) (local.get $words)))
        ;; One word: the same, in lane 0 of vectors loaded from one word each.
        (local.set $had (v128.or (v128.load32_zero (local.get $result)) (local.get $vfresh)))
        (if (local.get $digits)
          (then
            (local.set $highSame (v128.andnot (v128.or (v128.load32_zero (local.get $ht)) (local.get $htAll)) (v128.and (v128.load32_zero (local.get $hb)) (local.get $hbMask))))
            (local.set $middleSame (v128.andnot (v128.or (v128.load32_zero (local.get $mt)) (local.get $mtAll)) (v128.and (v128.load32_zero (local.get $mb)) (local.get $mbMask))))
            (local.set $lbv (v128.and (v128.load32_zero (local.get $lb)) (local.get $lbMask)))
            (local.set $under
              (v128.or (v128.and (v128.load32_zero (local.get $hb)) (local.get $hbMask))
                (v128.and (local.get $highSame)
                  (v128.or (v128.and (v128.load32_zero (local.get $mb)) (local.get $mbMask)) (v128.and (local.get $middleSame) (local.get $lbv))))))
            (local.set $same
              (v128.andnot
                (v128.and (v128.and (local.get $highSame) (local.get $middleSame)) (v128.or (v128.load32_zero (local.get $lt)) (local.get $ltAll)))
                (local.get $lbv))))
          (else
            (local.set $under (v128.load32_zero (local.get $hb)))
            (local.set $same (v128.andnot (v128.or (v128.load32_zero (local.get $ht)) (local.get $htAll)) (local.get $under)))))
        (local.set $members (v128.and (local.get $had) (local.get $same)))
        (i32.store (local.get $result)
          (i32x4.extract_lane 0
            (v128.or
              (v128.and (local.get $had)
                (v128.or (v128.and (local.get $under) (local.get $vbelow)) (v128.andnot (v128.not (v128.or (local.get $under) (local.get $same))) (local.get $vbelow))))
              (v128.and (local.get $members) (local.get $vmembers)))))
        (if (i32.and (local.get $note) (i32.ne (i32x4.extract_lane 0 (local.get $members)) (i32.const 0)))
          (then
            (i32.store (i32.add (local.get $memberWords) (i32.shl (local.get $noted) (i32.const 2))) (local.get $word))
            (i32.store (i32.add (local.get $memberBits) (i32.shl (local.get $noted) (i32.const 2))) (i32x4.extract_lane 0 (local.get $members)))
            (local.set $noted (i32.add (local.get $noted) (i32.const 1)))))
        (local.set $word (i32.add (local.get $word) (i32.const 1)))
        (local.set $result (i32.add (local.get $result) (i32.const 4)))
        (local.set $hb (i32.add (local.get $hb) (i32.const 4)))
        (local.set $ht (i32.add (local.get $ht) (i32.const 4)))
        (local.set $mb (i32.add (local.get $mb) (i32.const 4)))
        (local.set $mt (i32.add (local.get $mt) (i32.const 4)))
        (local.set $lb (i32.add (local.get $lb) (i32.const 4)))
        (local.set $lt (i32.add (local.get $lt) (i32.const 4)))
        (br $words)))
    (local.get $noted))
)
