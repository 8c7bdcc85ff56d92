# The first lines of a gdb batch script attached to a PostgreSQL backend:
# no paging or questions, and the signals PostgreSQL sends among its
# processes passed through untouched (gdb stops on them by default).  Read
# by JitprofTest::gdb_prologue() and bench/gdb_registration.sh.
set pagination off
set confirm off
set width 0
set debuginfod enabled off
handle SIGUSR1 nostop noprint pass
handle SIGUSR2 nostop noprint pass
handle SIGINT nostop noprint pass
handle SIGURG nostop noprint pass
handle SIGPIPE nostop noprint pass
handle SIGALRM nostop noprint pass
