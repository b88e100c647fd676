//! Which ROS topics a recording keeps (`--record-topics`): all, none, or topic globs, and the
//! warnings for globs that keep none of a run's topics.

use crate::record::recorder::{INBOUND_TOPIC, STATE_TOPIC};

/// Which ROS topics a recording keeps (`--record-topics`). State samples and the inbound log are
/// always kept: a replay needs them.
#[derive(Debug, Clone, PartialEq)]
pub enum TopicFilter {
    /// Every topic (default).
    All,
    /// No ROS topics.
    None,
    /// Topics matching any of these globs (`*` matches any run of characters, `?` one).
    Globs(Vec<glob::Pattern>),
}

impl TopicFilter {
    /// Parse `all`, `none` or a comma-separated glob list.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "all" => Ok(TopicFilter::All),
            "none" => Ok(TopicFilter::None),
            "" => {
                Err("--record-topics is empty: give all, none or topic globs like /robot/*".into())
            }
            list => list
                .split(',')
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(|g| {
                    glob::Pattern::new(g)
                        .map_err(|e| {
                            format!(
                                "--record-topics: `{}` is not a topic glob: {e}",
                                crate::error::clip(g)
                            )
                        })
                })
                .collect::<Result<Vec<_>, _>>()
                .and_then(|gs| {
                    if gs.is_empty() {
                        Err(format!("--record-topics `{}` names no glob: give all, none or topic globs like /robot/*", crate::error::clip(s)))
                    } else {
                        Ok(TopicFilter::Globs(gs))
                    }
                }),
        }
    }

    /// As the provenance states it: `all`, `none` or the glob list (the way `--record-topics`
    /// takes it).
    pub fn describe(&self) -> String {
        match self {
            TopicFilter::All => "all".into(),
            TopicFilter::None => "none".into(),
            TopicFilter::Globs(gs) => gs.iter().map(|g| g.as_str()).collect::<Vec<_>>().join(","),
        }
    }

    /// One warning per glob that keeps none of `topics` (the run's topics), naming the glob and
    /// the topics there are.
    pub fn unmatched(&self, topics: &std::collections::BTreeSet<String>) -> Vec<String> {
        let TopicFilter::Globs(gs) = self else { return Vec::new() };
        let all: Vec<&str> = topics.iter().map(String::as_str).collect();
        gs.iter()
            // State samples and inbound events are always kept: a glob naming them is no miss.
            .filter(|g| !g.matches(STATE_TOPIC) && !g.matches(INBOUND_TOPIC))
            .filter(|g| !topics.iter().any(|t| g.matches(t)))
            .map(|g| {
                format!(
                    "--record-topics: `{}` matches no topic of this run, so it keeps nothing; the run's topics: {}",
                    crate::error::clip(g.as_str()),
                    if all.is_empty() { "(none)".to_string() } else { all.join(", ") }
                )
            })
            .collect()
    }

    /// Whether `topic` is kept.
    pub fn keeps(&self, topic: &str) -> bool {
        match self {
            TopicFilter::All => true,
            TopicFilter::None => false,
            TopicFilter::Globs(gs) => gs.iter().any(|g| g.matches(topic)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_globs() {
        let f = TopicFilter::parse("/robot/*, /clock").unwrap();
        assert!(f.keeps("/robot/odom"));
        assert!(f.keeps("/clock"));
        assert!(!f.keeps("/tf"));
        assert!(TopicFilter::parse("none").unwrap() == TopicFilter::None);
        let f = TopicFilter::parse("/a/*/scan").unwrap();
        assert!(f.keeps("/a/b/scan") && !f.keeps("/a/b/odom"));
        assert_eq!(
            TopicFilter::parse("/a/[b").unwrap_err(),
            "--record-topics: `/a/[b` is not a topic glob: Pattern syntax error near position 3: invalid range pattern"
        );
        assert_eq!(
            TopicFilter::parse(" ").unwrap_err(),
            "--record-topics is empty: give all, none or topic globs like /robot/*"
        );
    }

    #[test]
    fn a_glob_that_keeps_nothing_is_named_with_the_topics_there_are() {
        let topics: std::collections::BTreeSet<String> =
            ["/scan", "/odom", "/clock"].into_iter().map(String::from).collect();
        let f = TopicFilter::parse("/scan, /robot/*, /odo?, /camera/**").unwrap();
        assert_eq!(
            f.unmatched(&topics),
            [
                "--record-topics: `/robot/*` matches no topic of this run, so it keeps nothing; the run's topics: /clock, /odom, /scan",
                "--record-topics: `/camera/**` matches no topic of this run, so it keeps nothing; the run's topics: /clock, /odom, /scan",
            ]
        );
        assert!(TopicFilter::All.unmatched(&topics).is_empty());
        assert!(TopicFilter::parse("/s*").unwrap().unmatched(&topics).is_empty());
    }
}
