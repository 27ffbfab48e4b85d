# make front: the front page's shapes of this chapter (tests/front.sh): S1, batch 1-16.
FRONT_01_naive_scan = --batch 1,2,4,8,16 --seqlen 512
# make check: extra runs ("NAME" "ARGS") and dump/load round trips ("KEY" "VERSION" "ARGS"
# "EXPECT" "DROP"), tests/run_checks.sh says how.
ROUNDTRIPS_01_naive_scan = "ok" "2" "--batch 2 --dim 6 --dstate 5 --seqlen 9 --groups 3" "vs loaded y, last_state.*PASS" "-"
