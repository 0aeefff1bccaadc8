//! The keys of a hybrid-parallel job: carried into the study, a table's
//! over the file's; every bad value placed on its key; refused where they
//! do not act.
use super::{assert_errors, parse};
use gcsim::dist::Dist;
use gcsim::parallel::{Layout, Parallel, Schedule};

/// A file-level layout read by study `a`, and study `b`'s own.
const PIPES: &str = "name = \"t\"\nn = 16\nparallel = \"dp=4,pp=2,tp=2\"\nmicrobatches = 4\nschedule = \"gpipe\"\nbackward_ratio = 1.5\np2p_time = 5e-2\nstage_work = [1, 1.25]\nmicrobatch_work = \"lognormal:mu=0,sigma=0.2\"\noptimizer_time = 0.2\n[[study]]\nlabel = \"a\"\nschemes = [\"ignore\", \"frc\"]\ns = [0, 1]\n[[study]]\nlabel = \"b\"\nschemes = [\"crc\"]\ns = 1\nparallel = \"pp=3,dp=2\"\nstage_work = \"1,1,1.5\"\nschedule = \"1f1b\"\n";

#[test]
fn the_keys_reach_the_study() {
    let s = parse(PIPES).unwrap();
    let a = &s.studies[0].study;
    let layout = Layout { dp: 4, pp: 2, tp: 2 };
    let expected = Parallel {
        schedule: Schedule::GPipe,
        backward_ratio: 1.5,
        p2p_time: 0.05,
        stage_work: vec![1.0, 1.25].into(),
        microbatch_work: Some("lognormal:mu=0,sigma=0.2".parse::<Dist>().unwrap()),
        optimizer_time: 0.2,
        ..Parallel::new(layout, 4)
    };
    assert_eq!(a.parallel(), Some(&expected));
    assert_eq!((a.n(), a.scheme_n()), (16, 4), "the ranks and the replicas");
    // Its own layout sets b's n (6, not the file's 16); the file's keys it
    // does not set still apply.
    let b = &s.studies[1].study;
    let p = b.parallel().unwrap();
    assert_eq!(p.layout, Layout { dp: 2, pp: 3, tp: 1 });
    assert_eq!((b.n(), b.scheme_n()), (6, 2));
    assert_eq!(
        (p.schedule, &p.stage_work[..]),
        (Schedule::OneFOneB, &[1.0, 1.0, 1.5][..])
    );
    assert_eq!((p.microbatches, p.backward_ratio, p.optimizer_time), (4, 1.5, 0.2));
    // Defaults: 1 microbatch, 1F1B, R = 2, equal stages, no τ.
    let bare = "name = \"t\"\nparallel = \"dp=2,pp=2\"\n[[study]]\nlabel = \"a\"\nschemes = [\"uncoded\"]\n";
    let s = parse(bare).unwrap();
    let p = s.studies[0].study.parallel().unwrap();
    assert_eq!(*p, Parallel::new(Layout { dp: 2, pp: 2, tp: 1 }, 1));
    assert_eq!(s.studies[0].study.n(), 4, "n from the layout, none given");
}

/// Every key's bad value names the key, on its line.
#[test]
fn bad_values_name_their_key() {
    let own = |key: &str| PIPES.replace("schedule = \"1f1b\"\n", &format!("{key}\n"));
    assert_errors([
        (PIPES.replace("tp=2", "tp=0"), "x.toml:3:", "key `parallel`: tp=`0`"),
        (
            PIPES.replace("dp=4", "dq=4"),
            "x.toml:3:",
            "key `parallel`: unknown key `dq`",
        ),
        (
            PIPES.replace("microbatches = 4", "microbatches = 0"),
            "x.toml:4:",
            "key `microbatches` 0 is out of range; accepted: 1 to 65536",
        ),
        (
            PIPES.replace("microbatches = 4", "microbatches = 2.5"),
            "x.toml:4:",
            "key `microbatches`: invalid value: floating point `2.5`, expected a whole number >= 0",
        ),
        (
            PIPES.replace("\"gpipe\"", "\"zero-bubble\""),
            "x.toml:5:",
            "key `schedule`: unknown schedule `zero-bubble`; accepted: gpipe, 1f1b",
        ),
        (
            PIPES.replace("\"gpipe\"", "\"interleaved:0\""),
            "x.toml:5:",
            "key `schedule`: interleaved:`0` is not a whole number of model chunks per stage from 1 to 64",
        ),
        (
            PIPES
                .replace("\"gpipe\"", "\"interleaved:2\"")
                .replace("microbatches = 4", "microbatches = 3"),
            "x.toml:4:",
            "key `microbatches` 3 is not a multiple of pp=2; interleaved:2 runs the microbatches in groups of P",
        ),
        (
            PIPES.replace("backward_ratio = 1.5", "backward_ratio = -1"),
            "x.toml:6:",
            "key `backward_ratio` -1 is out of range; accepted: a number > 0",
        ),
        (
            PIPES.replace("p2p_time = 5e-2", "p2p_time = -5e-2"),
            "x.toml:7:",
            "key `p2p_time` -0.05 is out of range",
        ),
        (
            PIPES.replace("[1, 1.25]", "[1, 1, 1]"),
            "x.toml:8:",
            "key `stage_work` 3 values for 2 stages; give one per stage (pp=2)",
        ),
        (
            PIPES.replace("[1, 1.25]", "[1, 0]"),
            "x.toml:8:",
            "key `stage_work` 0 is out of range",
        ),
        (
            PIPES.replace("[1, 1.25]", "true"),
            "x.toml:8:",
            "key `stage_work`: accepted: an array of numbers > 0, one per stage",
        ),
        (
            PIPES.replace("\"1,1,1.5\"", "\"1,1,heavy\""),
            "x.toml:20:",
            "key `stage_work`: `heavy` is not a number > 0",
        ),
        (
            PIPES.replace("sigma=0.2\"", "sigma=-1\""),
            "x.toml:9:",
            "key `microbatch_work`: ",
        ),
        (
            PIPES.replace("optimizer_time = 0.2", "optimizer_time = inf"),
            "x.toml:10:",
            "key `optimizer_time` inf is out of range",
        ),
        (
            own("n = 7"),
            "x.toml:21:",
            "key `n` 7 but key `parallel` dp=2,pp=3,tp=1 has 6 ranks; drop `n` or make them agree",
        ),
        (
            PIPES.replace("n = 16", "n = 15"),
            "x.toml:2:",
            "key `n` 15 but key `parallel` dp=4,pp=2,tp=2 has 16 ranks",
        ),
        (
            PIPES.replace("s = [0, 1]", "s = [0, 1]\nn = 8"),
            "x.toml:15:",
            "key `n` 8 but key `parallel` dp=4,pp=2,tp=2 has 16 ranks",
        ),
    ]);
}

/// What does not go with a layout is refused at its key: the pipeline's
/// keys without one, a load model, a master's transfers, the exact laws,
/// a scheme across replicas, n nowhere.
#[test]
fn what_a_layout_does_not_take_is_refused() {
    let own = |key: &str| PIPES.replace("schedule = \"1f1b\"\n", &format!("{key}\n"));
    let flat = PIPES.replace("parallel = \"dp=4,pp=2,tp=2\"\n", "");
    assert_errors([
        (
            flat.replace("parallel = \"pp=3,dp=2\"\n", ""),
            "x.toml:3:",
            "key `microbatches` describes a pipeline job: give parallel = \"dp=D,pp=P,tp=T\"",
        ),
        (
            own("load_model = \"scaled\""),
            "x.toml:21:",
            "study `b`: under key `parallel` a replica's load is its number of microbatches, each drawn; drop key `load_model`",
        ),
        (
            own("comm_time = 0.5"),
            "x.toml:21:",
            "study `b`: key `comm_time` acts on a master's messages",
        ),
        (own("analytic = true"), "x.toml:19:", "study `b`: key `analytic`: a pipeline's time"),
        (
            PIPES.replace("[\"crc\"]", "[\"speculative\"]").replace("s = 1\n", ""),
            "x.toml:17:",
            "study `b`: speculative does not code across the replicas of key `parallel`",
        ),
        // n is needed by a flat table only.
        (
            "name = \"t\"\n[[study]]\nlabel = \"a\"\nschemes = [\"uncoded\"]\nparallel = \"dp=2\"\n[[study]]\nlabel = \"b\"\nschemes = [\"uncoded\"]\n".to_string(),
            "x.toml:7:",
            "missing field `n`: give the number of workers",
        ),
    ]);
}

/// `[[train]]` and `[[plan]]` tables refuse each key, their own and the
/// file's `parallel`; a `[[train]]`'s `schedule` is its step size's.
#[test]
fn train_tables_refuse_the_keys_and_plan_tables_take_them() {
    let train = "name = \"t\"\nn = 4\n[[train]]\nlabel = \"tr\"\nschemes = [\"crc\"]\ns = 1\ndata = \"synthetic:rows=100,features=3\"\n";
    let plan = "name = \"t\"\nn = 4\n[[plan]]\nlabel = \"p\"\n";
    let values = [
        "parallel = \"dp=2,pp=2\"",
        "microbatches = 2",
        "schedule = \"gpipe\"",
        "backward_ratio = 1",
        "p2p_time = 0.1",
        "stage_work = [1, 1]",
        "microbatch_work = \"exp:rate=1\"",
        "optimizer_time = 1",
    ];
    for value in values {
        let key = value.split(' ').next().unwrap();
        // A [[plan]] passes its own key, and the file's, to `gcsim plan`.
        let flag = format!("--{}", key.replace('_', "-"));
        let given = value
            .split(" = ")
            .nth(1)
            .unwrap()
            .trim_matches('"')
            .replace(['[', ']', ' '], "");
        for text in [
            format!("{plan}{value}\n"),
            plan.replace("n = 4\n", &format!("n = 4\n{value}\n")),
        ] {
            let args = &super::parse(&text).unwrap().plans[0].args;
            let at = args
                .iter()
                .position(|a| *a == flag)
                .unwrap_or_else(|| panic!("{flag} in {args:?}"));
            assert_eq!(args[at + 1], given, "{text}");
        }
        let reason = match key {
            "schedule" => "key `schedule`: unknown schedule `gpipe`; accepted: constant, inv-sqrt (step/sqrt(t+1)) or inverse:decay=D (step/(1+D*t), D > 0); `gpipe` is a pipeline's schedule, a [[study]]'s key beside `parallel`: a [[train]]'s `schedule` is its step size's".to_string(),
            _ => format!("train `tr`: key `{key}` describes a pipeline job; a [[train]] table trains at a master, on a flat cluster"),
        };
        assert_errors([(format!("{train}{value}\n"), "x.toml:8:", reason.as_str())]);
    }
    let study = "[[study]]\nlabel = \"a\"\nschemes = [\"ignore\"]\ns = 1\n";
    let layout = "name = \"t\"\nn = 4\nparallel = \"dp=2,pp=2\"\n";
    let head = "name = \"t\"\nn = 4\n";
    let train_table = &train[head.len()..];
    assert_errors([
        (
            format!("{layout}{study}{train_table}"),
            "x.toml:3:",
            "train `tr`: key `parallel` lays out the [[study]] tables' pipeline job; a [[train]] table trains at a master",
        ),
        (
            train.replace("n = 4\n", "n = 4\nmicrobatches = 4\n"),
            "x.toml:3:",
            "key `microbatches` describes the pipeline job of [[study]] and [[plan]] tables, and the file has none",
        ),
    ]);
}
