#!/usr/bin/perl
# The attacker execution A of WarmBreakInTests, beside warm sandboxes B of the same
# executor. Argv: MARK WORK. Commands on stdin, one a line; each ends with "DONE":
#   probe PID...  writes into every directory it finds (the executor's home, /tmp,
#                 /dev/shm, /var/tmp), every process's cwd, fd 0, environ, mem and signal 0,
#                 SIGSTOP and SIGKILL to the given pids (B's waiting trees), kill(-1),
#                 a forged frame and ready marker on its own fd 0 and stdout
#   watch SECRET SECONDS  reads all it can for that long, looking for SECRET
#   daemon        leaves a process behind (its name holds MARK)
# EOF ends it. A line that reports a success starts with an upper-case word.
use strict;
use warnings;
use POSIX ();

$| = 1;
my ($mark, $work) = @ARGV;
my $cwd = POSIX::getcwd();

sub slurp {
	my ($file, $max) = @_;
	open(my $handle, '<', $file) or return undef;
	my $read = sysread($handle, my $buffer, $max // 65536);
	return (defined $read) ? $buffer : undef;
}

sub cmdline {
	my ($pid) = @_;
	my $line = slurp("/proc/$pid/cmdline") // '?';
	$line =~ tr/\0/ /;
	$line =~ s/\s+$//;
	return $line;
}

# Its own processes: their command lines hold MARK.
sub own {
	my ($pid) = @_;
	return 1 if $pid == $$;
	return index(cmdline($pid), $mark) >= 0;
}

sub pids {
	opendir(my $proc, '/proc') or return ();
	return grep { /^\d+$/ } readdir($proc);
}

sub walk {
	my ($directory, $depth, $found) = @_;
	push @$found, $directory;
	return if $depth == 0;
	opendir(my $handle, $directory) or return;
	for my $entry (readdir $handle) {
		next if $entry eq '.' || $entry eq '..';
		my $path = "$directory/$entry";
		next if -l $path;
		walk($path, $depth - 1, $found) if -d $path;
	}
}

sub files {
	my ($directory, $depth, $found) = @_;
	opendir(my $handle, $directory) or return;
	for my $entry (readdir $handle) {
		next if $entry eq '.' || $entry eq '..';
		my $path = "$directory/$entry";
		next if -l $path;
		if (-d $path) {
			files($path, $depth - 1, $found) if $depth > 0;
		}
		elsif (-f _) {
			push @$found, $path;
		}
	}
}

# A whole frame of the hand-over (launcher.h): /bin/sh -c 'echo FORGED', FORGED=1.
sub frame {
	my @strings = ('/bin/sh', '-c', 'echo FORGED', 'FORGED=1');
	my $body = pack('LL', 3, 1) . join('', map { "$_\0" } @strings);
	return 'CAVEWARM' . pack('LL', 1, length($body)) . $body;
}

sub mine {
	my ($directory) = @_;
	return index("$directory/", "$cwd/") == 0;
}

sub probe {
	my @targets = @_;
	my @directories;
	walk($_, 4, \@directories) for ($work, '/tmp', '/dev/shm', '/var/tmp');
	for my $directory (@directories) {
		next if mine($directory);
		if (open(my $handle, '>', "$directory/planted-$mark")) {
			print "WROTE $directory\n";
			close $handle;
		}
		print "MKDIR $directory\n" if mkdir("$directory/planted-dir-$mark");
	}
	print "listed " . scalar(@directories) . " directories\n";
	my $processes = 0;
	for my $pid (pids()) {
		next if own($pid);
		$processes++;
		my $line = cmdline($pid);
		if (opendir(my $handle, "/proc/$pid/cwd")) {
			print "CWD $pid $line\n";
			if (open(my $planted, '>', "/proc/$pid/cwd/planted-$mark")) {
				print "CWDWRITE $pid $line\n";
			}
		}
		if (sysopen(my $handle, "/proc/$pid/fd/0", POSIX::O_WRONLY | POSIX::O_NONBLOCK)) {
			print "FD0 $pid $line\n";
			syswrite($handle, frame());
		}
		my $environ = slurp("/proc/$pid/environ");
		print "ENVIRON $pid $line\n" if defined $environ && length($environ) > 0;
		if (open(my $handle, '<', "/proc/$pid/mem")) {
			print "MEM $pid $line\n";
		}
		print "CANSIGNAL $pid $line\n" if kill(0, $pid);
	}
	print "looked at $processes processes\n";
	for my $pid (@targets) {
		next if own($pid);
		print "SIGNALLED $pid STOP\n" if kill('STOP', $pid);
		print "SIGNALLED $pid KILL\n" if kill('KILL', $pid);
	}
	# kill(2) of -1 reaches every process it may signal but itself.
	print "kill -1 STOP: " . kill('STOP', -1) . "\n";
	print "kill -1 KILL: " . kill('KILL', -1) . "\n";
	# Its own stdin, opened again for writing: a frame and a marker into its own pipe.
	if (sysopen(my $stdin, "/proc/self/fd/0", POSIX::O_WRONLY | POSIX::O_NONBLOCK)) {
		print "own stdin opened for writing\n";
		# A line of its own: the command loop below reads it and ignores it.
		syswrite($stdin, frame() . "CAVE-RDY\n");
	}
	print "CAVE-RDY" . frame() . "\n";
	print "DONE\n";
}

sub watch {
	my ($secret, $seconds) = @_;
	my $deadline = time() + $seconds;
	my $rounds = 0;
	my %leaks;
	while (time() < $deadline) {
		$rounds++;
		for my $pid (pids()) {
			for my $file ("environ", "cmdline") {
				my $content = slurp("/proc/$pid/$file");
				$leaks{"/proc/$pid/$file " . cmdline($pid)} = 1 if defined $content && index($content, $secret) >= 0;
			}
		}
		my @found;
		files($_, 6, \@found) for ($work, '/tmp', '/dev/shm', '/var/tmp');
		for my $file (@found) {
			next if mine($file);
			my $content = slurp($file, 1048576);
			$leaks{$file} = 1 if defined $content && index($content, $secret) >= 0;
		}
		select(undef, undef, undef, 0.05);
	}
	print "LEAK $_\n" for sort keys %leaks;
	print "watched $rounds rounds\n";
	print "DONE\n";
}

sub daemon {
	my $child = fork();
	if (defined $child && $child == 0) {
		POSIX::setsid();
		my $grandchild = fork();
		if (defined $grandchild && $grandchild == 0) {
			$0 = "cave-warm-daemon-$mark";
			$SIG{$_} = 'IGNORE' for qw(HUP TERM INT);
			open(STDIN, '<', '/dev/null');
			open(STDOUT, '>', '/dev/null');
			open(STDERR, '>', '/dev/null');
			sleep 300;
			POSIX::_exit(0);
		}
		POSIX::_exit(0);
	}
	waitpid($child, 0) if defined $child;
	print "daemon left\n";
	print "DONE\n";
}

while (my $line = <STDIN>) {
	chomp $line;
	my ($command, @arguments) = split(/ /, $line);
	next unless defined $command;
	probe(@arguments) if $command eq 'probe';
	watch(@arguments) if $command eq 'watch';
	daemon() if $command eq 'daemon';
}
