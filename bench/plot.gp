# bench/run's plot: latency percentiles and throughput per workload.
# gnuplot -e "data='plot.tsv'; out='bench.png'" bench/plot.gp
set terminal png size 1200,520 noenhanced
set output out
set datafile separator "\t"
set datafile columnheaders
set multiplot layout 1,2 title "nodeflow-bench"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -30
set key top left
set grid ytics
set title "latency (ms)"
set logscale y
set yrange [0.1:*]
plot data using 2:xtic(1) title "e2e p50", '' using 3 title "e2e p95", \
     '' using 4 title "e2e p99", '' using 5 title "dispatch p50", '' using 6 title "dispatch p99"
unset logscale y
set yrange [0:*]
set title "throughput (per s)"
plot data using 7:xtic(1) title "tasks/s", '' using 8 title "workflows/s"
unset multiplot
