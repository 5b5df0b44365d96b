# Tries every way it knows to read the masked secrets of /etc from inside a sandbox
# (StartedMarkerBreakInTests#maskedSecretsStayUnreadableWhateverThePath). Prints
# "READ <how> <path> <n>" for each read that gave bytes or listed entries, "LINKED <path>"
# for each hard link it made to a secret, and "done" at the end.
use strict;
use warnings;
use Fcntl;

my $O_PATH = 010000000;
my @secrets = ('/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/security/opasswd',
	'/etc/ssh', '/etc/ssl/private');
my $n = 0;

sub attempt {
	my ($how, $path) = @_;
	if (-d $path) {
		if (opendir(my $directory, $path)) {
			my @entries = grep { !/^\.\.?$/ } readdir($directory);
			print "READ $how $path " . scalar(@entries) . "\n" if @entries;
			for my $entry (@entries) {
				attempt("$how/entry", "$path/$entry") unless -d "$path/$entry";
			}
		}
		return;
	}
	if (open(my $file, '<', $path)) {
		my $count = read($file, my $bytes, 4096);
		print "READ $how $path $count\n" if $count;
	}
}

for my $secret (@secrets) {
	my $name = substr($secret, 5);
	attempt('plain', $secret);
	attempt('proc-root', "/proc/self/root$secret");
	attempt('dotdot', "/etc/../etc/./$name");
	attempt('slashes', "//etc//$name");
	attempt('cwd-up', "/proc/self/cwd/../../../../../../../../..$secret");
	if (sysopen(my $handle, $secret, O_RDONLY | $O_PATH)) {
		attempt('opath-reopen', "/proc/self/fd/" . fileno($handle));
	}
	if (opendir(my $etc, '/etc')) {
		attempt('proc-fd-etc', "/proc/self/fd/" . fileno($etc) . "/$name");
	}
	$n++;
	if (link($secret, "hard$n")) {
		print "LINKED $secret\n";
		attempt('hard-link', "hard$n");
	}
	symlink($secret, "soft$n");
	attempt('symlink', "soft$n");
}
print "done\n";
