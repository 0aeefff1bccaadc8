# The paths of bench/compare.sh and bench/versus.sh, sourced by both: `all`
# names them, and `define PATH` sets the path's trials and its gcsim, NumPy
# and floor arguments.
all=(headline shared transfers classes replay bootstrap frc rank timeout speculative k-async additive lognormal)
trace=data/trace-llm-64w.csv

# Each path: trials, then gcsim's, NumPy's and the floor's arguments
# (trials and output options are added), and gcsim's command for the legend.
define() {
  case $1 in
    headline)
      trials=1000000
      gcsim_args=(sweep --n 100 --s 0..50)
      numpy_args=(bench/numpy_headline.py)
      floor_args=(100) ;;
    shared)
      trials=1000000
      gcsim_args=(sweep --n 100 --s 0..50 --comm-time 0.3 --link shared)
      numpy_args=(bench/numpy_shared.py)
      floor_args=(100) ;;
    transfers)
      trials=1000000
      gcsim_args=(sweep --n 100 --s 0..50 --comm-dist exp:rate=2)
      numpy_args=(bench/numpy_transfers.py)
      floor_args=(100 --per-trial 200) ;;
    classes)
      trials=1000000
      gcsim_args=(sweep --n 100 --s 0..50 --workers 50:exp:rate=1 --workers 50:exp:rate=0.5)
      numpy_args=(bench/numpy_classes.py)
      floor_args=(100 --workers 50:exp:rate=1 --workers 50:exp:rate=0.5) ;;
    replay)
      trials=1000000
      gcsim_args=(sweep --n 64 --scheme crc --s 0..31 --dist "replay:path=$trace" --trace-bootstrap 0)
      numpy_args=(bench/numpy_trace.py replay "$trace")
      floor_args=(64 --dist "replay:path=$trace") ;;
    bootstrap)
      trials=1000000
      gcsim_args=(sweep --n 100 --s 0..50 --dist "trace:path=$trace" --trace-bootstrap 0)
      numpy_args=(bench/numpy_trace.py bootstrap "$trace")
      floor_args=(100 --dist "trace:path=$trace") ;;
    frc)
      trials=10000
      gcsim_args=(sweep --n 100000 --scheme frc --s 0,1,3,9,99)
      numpy_args=(bench/numpy_frc.py)
      floor_args=(100000) ;;
    rank)
      trials=400
      gcsim_args=(sweep --n 50 --scheme crc --s 0..10 --decoder rank)
      numpy_args=(bench/numpy_rank.py)
      floor_args=(50 --crc-qr 0..10) ;;
    timeout)
      trials=1000000
      gcsim_args=(sweep --n 100 --scheme timeout --timeout 1.5)
      numpy_args=(bench/numpy_timeout.py)
      floor_args=(100) ;;
    speculative)
      trials=1000000
      gcsim_args=(sweep --n 100 --scheme speculative)
      numpy_args=(bench/numpy_speculative.py)
      floor_args=(100 --per-trial 125) ;;
    k-async)
      trials=200000
      gcsim_args=(sweep --n 100 --scheme k-async --k 50)
      numpy_args=(bench/numpy_kasync.py)
      floor_args=(100 --per-trial 900) ;;
    additive)
      trials=50000
      gcsim_args=(sweep --n 100 --s 0..50 --load-model additive)
      numpy_args=(bench/numpy_additive.py)
      floor_args=(100 --per-trial 5100) ;;
    lognormal)
      trials=1000000
      gcsim_args=(sweep --n 100 --s 0..50 --dist lognormal:mu=0,sigma=1)
      numpy_args=(bench/numpy_lognormal.py)
      floor_args=(100 --dist lognormal:mu=0,sigma=1) ;;
    *)
      echo "unknown path \`$1\`; accepted: ${all[*]}" >&2
      exit 2 ;;
  esac
}
