# make front: the front page's shapes of this chapter (tests/front.sh): S1, batch 1-16.
FRONT_01_naive_scan = --batch 1,2,4,8,16 --seqlen 512
